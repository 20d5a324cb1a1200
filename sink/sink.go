package sink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/internal/writeprops"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// Sink appends rows delivered at least once to one Iceberg table, exactly
// once (see the package documentation). Not safe for concurrent use,
// except [Sink.Health].
//
// Invariants, kept between calls:
//   - committed holds the marks of the table state the sink last loaded or
//     committed; a commit requires the table still to hold them for every
//     source partition it advances (else [ErrFenced]);
//   - pending holds, for each source partition written since the last
//     commit, the mark of its newest row; every row of files has an offset
//     above committed's and at or below pending's;
//   - files is nil exactly when no row is pending in the main table
//     (always in upsert mode, whose pending rows are in changes).
type Sink struct {
	cat   catalog.Catalog
	ident icetable.Identifier
	name  string
	cfg   config

	tbl *icetable.Table
	tw  *table.Writer // the table's operations (compaction, expiry); nil until first used
	// planOnLast: when this sink's last commit was planned, the table was
	// as the commit before it had left it (no other writer in between),
	// so the next commit plans on tbl instead of loading the table first;
	// a conflict then costs one attempt, retried at once on a fresh load.
	planOnLast bool
	spec       *partition.Spec
	committed  marks
	pending    marks
	skipped    []skip // of the pending batch, for SummarySkipped

	res      *schema.Resolution // of resIn, the last input schema
	resIn    *arrow.Schema
	clock    *eventClock // nil without event time
	keys     *keyIndex   // nil without keyed mode
	files    *fileStream
	changes  []arrow.RecordBatch     // pending rows in upsert mode (upsert.go) and of a keyed member (member.go), in place of files
	late     *lateRows               // nil until the first late row
	dead     *Sink                   // the dead-letter table's sink; nil until the first dead letter
	open     map[partition.Key]int64 // partitions appended to, not yet compacted: the end of their window
	small    map[partition.Key]int   // small data files committed to each partition since its last compaction (compactfiles.go)
	changed  map[partition.Key]bool  // partitions upsert commits changed since their last compaction (compactupsert.go)
	held     *heldMaintenance        // non-nil: maintenance held for an Ingester (ingester.go)
	rows     int64                   // pending rows (main table)
	bytes    int64
	since    time.Time // when the first pending row arrived
	stats    Stats
	meters   *meters // OpenTelemetry counters of stats (metrics.go)
	health   healthState
	closed   bool
	isSide   bool         // the side table's sink: committed by its main sink only
	fleet    *memberState // non-nil: a member of a fleet, which hands over and never commits (member.go)
	sideOpts []Option
}

// Stats counts what a sink did with the rows it was handed.
type Stats struct {
	Appended     int64 // rows committed to the table
	Redelivered  int64 // rows dropped: at or below a position already held
	Duplicates   int64 // rows dropped in keyed mode: key already held
	Late         int64 // late rows (routed, dropped or rejected)
	LateDropped  int64 // late rows dropped by table.DropLate
	LateRejected int64 // late rows that failed a Write under table.RejectLate
	DeadLetters  int64 // messages rejected to the dead-letter table
	Commits      int64 // snapshots committed
	Fenced       int64 // commits refused with ErrFenced or ErrKeyCommitted
	Skipped      int64 // messages passed by [Sink.Skip]
	Passed       int64 // messages passed by [Sink.Pass]: tombstones of a change stream
	Compactions  int64 // partitions compacted
	// MaintenanceFailures counts the snapshot expiries and compactions
	// that failed after a commit: logged, retried later, never the
	// commit's error (its rows landed).
	MaintenanceFailures int64
}

// Open returns a sink appending to table ident of cat, with the positions
// the table holds now.
func Open(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, opts ...Option) (*Sink, error) {
	if cat == nil {
		return nil, fmt.Errorf("%w: nil catalog", ErrBadOption)
	}
	cfg := defaults()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.deadLetter != nil && slices.Equal(cfg.deadLetter, ident) {
		return nil, fmt.Errorf("%w: the dead-letter table is the table %s", ErrBadOption, strings.Join(ident, "."))
	}
	s := &Sink{cat: cat, ident: ident, name: strings.Join(ident, "."), cfg: cfg, pending: marks{}, sideOpts: opts}
	var err error
	if s.meters, err = newMeters(cfg.meterProvider, s.name, s); err != nil {
		return nil, fmt.Errorf("%w: meters: %w", ErrBadOption, err)
	}
	if err := s.load(ctx); err != nil {
		return nil, errors.Join(err, s.meters.stop())
	}
	s.notePending()
	if cfg.eventTime != "" {
		c, err := newEventClock(s.tbl, s.spec, cfg.eventTime, cfg.lateness)
		if err != nil {
			return nil, err
		}
		s.clock = c
	}
	if cfg.upsert != nil {
		if err := checkUpsert(s.tbl, s.name, cfg); err != nil {
			return nil, errors.Join(err, s.meters.stop())
		}
	}
	if cfg.member != "" {
		s.fleet = &memberState{id: cfg.member, maxUnlanded: DefaultMaxUnlanded}
		s.fleet.restart()
	}
	if len(cfg.key) > 0 {
		if err := checkKeyColumns(s.tbl, s.name, cfg.key); err != nil {
			return nil, err
		}
		if s.fleet == nil { // a member's keys are the committer's to check
			s.keys = newKeyIndex(cfg.key)
		}
	}
	return s, nil
}

// load reads the table and the positions it holds.
func (s *Sink) load(ctx context.Context) error {
	tbl, err := snapshotcommit.Load(ctx, s.cat, s.ident)
	if err != nil {
		return fmt.Errorf("sink: open %s: %w", s.name, err)
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if err := partition.CheckFieldNames(tbl.Spec()); err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if err := writeprops.Check(tbl.Properties()); err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	m, err := tableMarks(tbl)
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if s.res != nil && tbl.Schema().ID != s.tbl.Schema().ID {
		s.res = nil // resolved against the old schema
	}
	// The pending rows were checked against the marks they were read
	// with: those marks stay the fence of their source partitions, or a
	// reload between Write and Commit (a compaction, an expiry) would let
	// a zombie commit rows a newer owner committed meanwhile.
	for sp := range s.pending {
		if old, ok := s.committed[sp]; ok {
			m[sp] = old
		} else {
			delete(m, sp)
		}
	}
	s.tbl, s.spec, s.committed = tbl, spec, m
	return nil
}

// refresh reads the table as load does, but keeps the sink's mark of
// every source partition it holds one of: the mark it read when it
// started the partition, or the one its own last commit of it wrote. A
// table mark that moved since (a rollback of main, another owner's
// commit) fences the sink's next commit of that partition; it must not
// become the partition's new start, as the source resumes from Start
// only and is elsewhere (after a rollback, rows committed past the
// rolled-back mark would leave a gap). A compaction or an expiry
// refreshes; Start and Open load. The source partitions of landed (a
// commit of the sink found after an unknown outcome, its pending batch
// already reset) take the table's marks.
func (s *Sink) refresh(ctx context.Context, landed marks) error {
	old := s.committed
	if err := s.load(ctx); err != nil {
		return err
	}
	for sp, m := range old {
		if _, ok := landed[sp]; !ok {
			s.committed[sp] = m
		}
	}
	return nil
}

// Start reads the positions the table holds for sps (all the table's
// when none is named), to resume each source partition one past its
// offset (-1: the table holds nothing of it). Rows still pending are
// committed first. Call it when the sink (re)starts and whenever it
// takes ownership of source partitions.
func (s *Sink) Start(ctx context.Context, sps ...SourcePartition) (map[SourcePartition]int64, error) {
	if s.closed {
		return nil, ErrClosed
	}
	defer s.notePending()
	if s.fleet != nil { // a member: what it did not hand over is replayed from the table's positions
		if err := s.discard(ctx); err != nil {
			return nil, err
		}
		s.fleet.restart()
	} else if len(s.pending) > 0 {
		if _, err := s.Commit(ctx); err != nil && !errors.Is(err, ErrFenced) {
			return nil, err
		}
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	if s.keys != nil {
		s.keys.forget() // another owner may have committed keys since they were read
	}
	for _, side := range s.sides() {
		if err := side.load(ctx); err != nil {
			return nil, err
		}
	}
	out := map[SourcePartition]int64{}
	if len(sps) == 0 {
		for sp, m := range s.committed {
			out[sp] = m.Offset
		}
		return out, nil
	}
	for _, sp := range sps {
		out[sp] = s.committed.get(sp).Offset
	}
	return out, nil
}

// Stats returns what the sink did so far.
func (s *Sink) Stats() Stats { return s.stats }

// Table returns the latest table state the sink loaded or committed.
func (s *Sink) Table() *icetable.Table { return s.tbl }

// Pending reports the rows waiting for the next commit.
func (s *Sink) Pending() int64 { return s.rows }

// due reports whether the cadence asks for a commit now.
func (s *Sink) due() bool {
	return !s.isSide && s.fleet == nil && s.cadenceDue()
}

// cadenceDue reports whether the pending batch reached the cadence of
// WithCommitRows, WithCommitBytes or WithCommitInterval.
func (s *Sink) cadenceDue() bool {
	if len(s.pending) == 0 {
		return false
	}
	return s.rows >= s.cfg.commitRows || s.bytes >= s.cfg.commitBytes || time.Since(s.since) >= s.cfg.commitInterval
}

// CommitIfDue commits when the cadence asks for it (call it on an idle
// tick, so that the interval holds when no row arrives). It returns the
// zero Result when it did not commit.
func (s *Sink) CommitIfDue(ctx context.Context) (commit.Result, error) {
	if !s.due() {
		return commit.Result{}, nil
	}
	return s.Commit(ctx)
}

// Close commits what is pending and closes the sink.
func (s *Sink) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	if s.fleet != nil { // a member: what it did not hand over is replayed by the next owner
		return s.Abort(ctx)
	}
	_, err := s.Commit(ctx)
	s.closed = true
	return errors.Join(err, s.meters.stop())
}

// Abort drops what is pending (its files are removed) and closes the sink.
// The table is left as it was.
func (s *Sink) Abort(ctx context.Context) error {
	s.closed = true
	return errors.Join(s.discard(ctx), s.meters.stop())
}

// discard drops the pending batch and its files.
func (s *Sink) discard(ctx context.Context) error {
	var err error
	if s.files != nil {
		err = s.files.abort(context.WithoutCancel(ctx))
	}
	for _, side := range s.sides() {
		err = errors.Join(err, side.discard(ctx))
	}
	s.reset()
	return err
}

// sides are the side tables' sinks opened so far.
func (s *Sink) sides() []*Sink {
	var out []*Sink
	if s.late != nil {
		out = append(out, s.late.sink)
	}
	if s.dead != nil {
		out = append(out, s.dead)
	}
	return out
}

func (s *Sink) reset() {
	s.files, s.rows, s.bytes, s.pending, s.skipped = nil, 0, 0, marks{}, nil
	s.releaseChanges()
	if s.keys != nil {
		s.keys.resetPending()
	}
}

// positions merges the pending marks into those tbl holds, failing with
// ErrFenced when tbl moved one of the pending source partitions since the
// sink loaded it.
func (s *Sink) positions(tbl *icetable.Table) (marks, error) {
	now, err := tableMarks(tbl)
	if err != nil {
		return nil, err
	}
	var moved []string
	for sp := range s.pending {
		if now.get(sp) != s.committed.get(sp) {
			moved = append(moved, fmt.Sprintf("%s (table holds offset %d, the sink started at %d)", sp, now.get(sp).Offset, s.committed.get(sp).Offset))
		}
	}
	if len(moved) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrFenced, strings.Join(moved, ", "))
	}
	merged := maps.Clone(now)
	maps.Copy(merged, s.pending)
	return merged, nil
}

// summaryProps are the summary properties of a commit holding merged:
// the positions, and the lineage every icerun snapshot records (the run,
// the code version, the schema the rows were written for and the table
// partitions the pending batch's data files touched).
func (s *Sink) summaryProps(merged marks, files []iceberg.DataFile) (iceberg.Properties, error) {
	return s.appendSummary(merged, files, s.rows)
}

// appendSummary is summaryProps for rows rows in files (a committer's
// commit of many hand-overs).
func (s *Sink) appendSummary(merged marks, files []iceberg.DataFile, rows int64) (iceberg.Properties, error) {
	v, err := merged.encode()
	if err != nil {
		return nil, err
	}
	keys, n, err := partitionsOf(s.spec, files)
	if err != nil {
		return nil, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	// An append records no input fingerprint or file hash: one empty
	// value per partition, so that lineage readers see one record per
	// partition the append touched.
	none := strings.Repeat(",", max(n-1, 0))
	props := iceberg.Properties{
		SummaryPositions:                    v,
		commit.SummaryRunID:                 s.cfg.runID,
		commit.SummaryCodeVersion:           s.cfg.codeVersion,
		commit.SummaryPartitions:            keys,
		commit.SummaryPartitionFingerprints: none,
		commit.SummaryPartitionFiles:        none,
		commit.SummaryPartitionSpecID:       strconv.Itoa(s.spec.ID()),
		commit.SummarySchemaID:              strconv.Itoa(s.tbl.Schema().ID),
		commit.SummaryRows:                  fmt.Sprint(rows),
		"icerun.sink.source-rows":           fmt.Sprint(rows),
	}
	if len(s.skipped) > 0 {
		props[SummarySkipped] = skipsText(s.skipped)
	}
	return props, nil
}

// partitionsOf is the value of [commit.SummaryPartitions] for files, and
// the number of partitions in it,
// written under spec: the canonical keys of their partitions, each once,
// in spec order, comma-separated, as the table writer records the
// partitions it replaces ("" for an unpartitioned table).
func partitionsOf(spec *partition.Spec, files []iceberg.DataFile) (string, int, error) {
	seen := map[partition.Key]bool{}
	var keys []partition.Key
	for _, f := range files {
		k, err := spec.KeyFromValues(f.Partition())
		if err != nil {
			return "", 0, fmt.Errorf("partition of data file %s: %w", f.FilePath(), err)
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	spec.SortKeys(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return strings.Join(out, ","), len(out), nil
}

// write hands rec (owned by the sink from now on) to the data files.
func (s *Sink) write(ctx context.Context, rec arrow.RecordBatch) error {
	if rec.NumRows() == 0 {
		rec.Release()
		return nil
	}
	if s.cfg.upsert != nil || s.fleet != nil && len(s.cfg.key) > 0 {
		s.rows += rec.NumRows()
		s.changes = append(s.changes, rec)
		return nil
	}
	if s.files == nil {
		tbl, err := writerTable(s.tbl)
		if err != nil {
			rec.Release()
			return fmt.Errorf("sink: %s: %w", s.name, err)
		}
		s.files = startFiles(ctx, tbl, rec.Schema(), &s.cfg)
	}
	s.rows += rec.NumRows()
	return s.files.add(ctx, rec)
}
