package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// ErrCompactionChanged is returned when the files a compaction wrote do
// not hold exactly the rows it read (nothing is committed then).
var ErrCompactionChanged = errors.New("sink: compaction changed the rows")

// Compact rewrites the data files of table partition key (a canonical key
// such as "event_day=2026-07-14") into target-size files holding the same
// rows: it reads the partition's files, writes them again, reads the new
// files back and checks that they hold exactly the rows read (an
// order-insensitive fingerprint of every row), then commits one snapshot
// (operation replace) that removes exactly the files it read. Rows other
// writers append to the partition meanwhile stay. Running it again on a
// compacted partition changes nothing (one file: no commit). It reports
// whether it committed.
//
// With [WithEventTime], the sink compacts each partition it appended to
// once the watermark passes the partition's end, after the commit that saw
// it pass.
func (s *Sink) Compact(ctx context.Context, key string) (bool, error) {
	if err := s.load(ctx); err != nil {
		return false, err
	}
	k, err := s.spec.Parse(key)
	if err != nil {
		return false, fmt.Errorf("sink: compact %s: %w", s.name, err)
	}
	return s.compact(ctx, k)
}

func (s *Sink) compact(ctx context.Context, k partition.Key) (bool, error) {
	tbl := s.tbl
	if tbl.CurrentSnapshot() == nil {
		return false, nil
	}
	op := "sink: compact " + s.name + "/" + k.String()
	scan := tbl.Scan(icetable.WithRowFilter(s.spec.Filter(k)))
	planned, err := scan.PlanFiles(ctx)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	var tasks []icetable.FileScanTask
	var del []iceberg.DataFile
	for _, t := range planned {
		fk, err := s.spec.KeyFromValues(t.File.Partition())
		if t.File.SpecID() != int32(s.spec.ID()) || err != nil || fk != k {
			continue
		}
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return false, nil // row-level deletes: left to a full rewrite
		}
		tasks = append(tasks, t)
		del = append(del, t.File)
	}
	if len(tasks) < 2 {
		return false, nil
	}
	var in fingerprint.Sum
	sc, recs, err := scan.ReadTasks(ctx, tasks)
	if err != nil {
		return false, fmt.Errorf("%s: read: %w", op, err)
	}
	counted := func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range recs {
			if err == nil {
				in.Add(rec)
			}
			if !yield(rec, err) {
				return
			}
		}
	}
	opts := []icetable.WriteRecordOption{icetable.WithWriteUUID(uuid.New()), icetable.WithClusteredWrite()}
	if s.cfg.targetFileSize > 0 {
		opts = append(opts, icetable.WithTargetFileSize(s.cfg.targetFileSize))
	}
	wt, err := writerTable(tbl)
	if err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	var add []iceberg.DataFile
	for f, err := range icetable.WriteRecords(ctx, wt, sc, counted, opts...) {
		if err != nil {
			return false, errors.Join(fmt.Errorf("%s: write: %w", op, err), removeFiles(context.WithoutCancel(ctx), tbl, add))
		}
		add = append(add, f)
	}
	if err := s.checkSame(ctx, tbl, add, &in); err != nil {
		return false, errors.Join(fmt.Errorf("%s: %w", op, err), removeFiles(context.WithoutCancel(ctx), tbl, add))
	}
	res, err := snapshotcommit.Rewrite(ctx, s.cat, snapshotcommit.RewriteRequest{
		Op: op, Ident: s.ident, TableUUID: tbl.Metadata().TableUUID().String(), Spec: s.spec, SchemaID: tbl.Schema().ID,
		Del: del, Add: add, Token: uuid.NewString(), Policy: s.cfg.policy, Lock: s.cfg.lock,
		Summary: func(tbl *icetable.Table) (iceberg.Properties, error) {
			m, err := tableMarks(tbl) // carried forward: the newest snapshot keeps every position
			if err != nil {
				return nil, err
			}
			v, err := m.encode()
			return iceberg.Properties{SummaryPositions: v, "icerun.sink.compacted": k.String()}, err
		},
	})
	if errors.Is(err, snapshotcommit.ErrFilesGone) {
		// Another writer compacted (or rewrote) the partition since this
		// one read it: its rows are as they were, in other files. Nothing
		// is committed; the files written here go.
		s.cfg.log.Info("sink compaction: the partition was compacted by another writer meanwhile", slog.String("table", s.name), slog.String("partition", k.String()))
		return false, errors.Join(removeFiles(context.WithoutCancel(ctx), tbl, add), s.load(ctx))
	}
	if err != nil {
		return false, errors.Join(err, removeFiles(context.WithoutCancel(ctx), tbl, add))
	}
	s.stats.Compactions++
	s.cfg.log.Info("sink compaction", slog.String("table", s.name), slog.String("partition", k.String()),
		slog.Int("files_before", len(del)), slog.Int("files_after", len(add)), slog.Int64("rows", in.Rows()), slog.Int64("snapshot", res.SnapshotID))
	return true, s.load(ctx)
}

// checkSame reads files back and fails unless they hold exactly the rows
// of want.
func (s *Sink) checkSame(ctx context.Context, tbl *icetable.Table, files []iceberg.DataFile, want *fingerprint.Sum) error {
	tasks := make([]icetable.FileScanTask, len(files))
	for i, f := range files {
		tasks[i] = icetable.FileScanTask{File: f, Length: f.FileSizeBytes()}
	}
	_, recs, err := tbl.Scan().ReadTasks(ctx, tasks)
	if err != nil {
		return err
	}
	var got fingerprint.Sum
	for rec, err := range recs {
		if err != nil {
			return err
		}
		got.Add(rec)
		rec.Release()
	}
	if got.String() != want.String() {
		return fmt.Errorf("%w: read %d rows (%s), the new files hold %d (%s)", ErrCompactionChanged, want.Rows(), want.String(), got.Rows(), got.String())
	}
	return nil
}

// compactClosed compacts the partitions the sink appended to whose window
// the watermark (the highest event time the table records, minus the
// lateness) has passed.
func (s *Sink) compactClosed(ctx context.Context) error {
	maxSeen := int64(math.MinInt64)
	for _, m := range s.committed {
		maxSeen = max(maxSeen, m.MaxEventTime)
	}
	for k, end := range s.open {
		if !s.clock.closed(end, maxSeen) {
			continue
		}
		if _, err := s.compact(ctx, k); err != nil {
			return err
		}
		s.planOnLast = false // the compaction committed past s.tbl
		delete(s.open, k)
		if s.keys != nil {
			s.keys.close(k)
		}
	}
	return nil
}

// noteOpen records the partitions of files, just committed, with the end of
// their window, for compactClosed.
func (s *Sink) noteOpen(files []iceberg.DataFile) {
	if s.clock == nil || s.clock.windowEnd == nil {
		return
	}
	for _, f := range files {
		k, err := s.spec.KeyFromValues(f.Partition())
		if err != nil {
			continue
		}
		if end, ok := s.clock.windowEnd(f.Partition()); ok {
			if s.open == nil {
				s.open = map[partition.Key]int64{}
			}
			s.open[k] = end
		}
	}
}
