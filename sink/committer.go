package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// Committer commits the hand-overs of a fleet's members ([WithHandOver],
// [Sink.HandOver]) to one table: all the hand-overs that fit in one
// snapshot (an append) per [Committer.Commit], with all their positions,
// through the same commit loop as a sink's own commits. Not safe for
// concurrent use.
//
// Exactly-once is a property of the table, not of the committer: a
// hand-over lands only when each of its ranges starts exactly one past
// the position the table holds of its source partition, checked on the
// table state every attempt commits on. So two committers (a zombie that
// resumed after another took over), a hand-over delivered twice, or a
// control topic read again from its start cost a retry or a dropped
// hand-over, never a duplicate or a gap.
//
// Invariants, kept between calls:
//   - waiting holds the hand-overs added and neither landed nor dropped,
//     each once (by ID), none of a generation below fence;
//   - a hand-over is dropped when one of its ranges starts at or below the
//     table's position of its source partition (its rows, or some of
//     them, are there: it can never land), when it was written for
//     another schema or spec than the table's current ones, or when it
//     is of a generation below fence. Its data files are never removed by
//     the committer (a duplicate of a landed hand-over names the same
//     files): they stay orphans for cleanup, and the member, finding the
//     table's position off its chain, starts again from the table's
//     positions;
//   - in upsert mode ([WithUpsert], the committer's and its members') a
//     hand-over carries change files instead ([ChangeFile]), which the
//     committer applies as one changelog write per round, comparing each
//     key with the row the table holds as the commit lands; in keyed mode
//     ([WithKey]) too, and the committer appends the rows whose key
//     neither the table nor an earlier row of the round holds; a landed or
//     dropped hand-over's change files are removed (none of them can
//     land again), and a hand-over whose change files are gone or
//     unreadable is dropped;
//   - among hand-overs that start at the same offset of a source
//     partition, the newer generation's lands.
type Committer struct {
	s       *Sink // the table's sink: its configuration, table state and maintenance; never pending
	waiting []*HandOver
	ids     map[string]bool // the IDs of waiting
	fenced  []*HandOver     // dropped by the fence, their change files not yet removed
	fence   int32
	stats   CommitterStats
	// beforeCommit, when set (tests), runs after a round is planned and
	// before its commit.
	beforeCommit func()
}

// CommitterStats counts what a committer did.
type CommitterStats struct {
	Commits    int64 // snapshots committed
	Landed     int64 // hand-overs committed
	Dropped    int64 // hand-overs dropped (see [Committer])
	Rows       int64 // rows committed
	Replans    int64 // rounds planned again because the table's positions moved under the plan
	Waiting    int   // hand-overs waiting
	Duplicates int64 // hand-overs added again while waiting (by ID)
	// DuplicateKeys counts, in keyed mode, the rows not committed because
	// the table or an earlier row of the round held their key.
	DuplicateKeys int64
}

// Landing is what one [Committer.Commit] did.
type Landing struct {
	commit.Result
	Landed  []*HandOver
	Dropped []*HandOver
}

// OpenCommitter returns a committer for table ident of cat. Its options
// are a sink's (retry policy, commit lock, run id, code version, logger,
// snapshot expiry, small-file compaction, event time, upsert mode with
// its compaction, keyed mode); WithHandOver is refused. Its members must
// be of its mode ([Mode]; a hand-over of another mode is refused by
// [Committer.Add]), with the same [table.ChangeSpec] or key columns.
// With [WithEventTime] (the members' column and lateness) it compacts,
// after the commit that moves the watermark past its end, each
// partition its hand-overs appended to, as a lone sink does: the
// watermark is the highest event time the table's positions record
// (each hand-over's ranges carry their source partition's), minus the
// lateness. The members' side tables (late rows, dead letters) are
// theirs to commit: a committer writes only to its table.
func OpenCommitter(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, opts ...Option) (*Committer, error) {
	s, err := Open(ctx, cat, ident, opts...)
	if err != nil {
		return nil, err
	}
	if s.fleet != nil {
		return nil, errors.Join(fmt.Errorf("%w: a committer is not a member (WithHandOver)", ErrBadOption), s.Abort(ctx))
	}
	return &Committer{s: s, ids: map[string]bool{}}, nil
}

// Add queues hand-overs for the next [Committer.Commit]. A hand-over
// already waiting (same ID) is kept once; one of a generation below the
// fence is dropped at once; one of another table or mode ([Mode]), or
// that names a source partition twice, fails with
// [ErrBadHandOver] and nothing is queued.
func (c *Committer) Add(hs ...*HandOver) error {
	uuid := c.s.tbl.Metadata().TableUUID().String()
	for _, h := range hs {
		if h.TableUUID != uuid {
			return fmt.Errorf("%w: %s from member %s is for table %s, not %s (%s)", ErrBadHandOver, h.ID, h.Member, h.TableUUID, uuid, c.s.name)
		}
		if err := checkMode(h, modeOf(c.s.cfg)); err != nil {
			return fmt.Errorf("%w: %s from member %s: %w", ErrBadHandOver, h.ID, h.Member, err)
		}
		seen := map[SourcePartition]bool{}
		for _, r := range h.Ranges {
			if seen[r.SourcePartition] || r.From < 0 || r.To < r.From {
				return fmt.Errorf("%w: %s from member %s: range %s", ErrBadHandOver, h.ID, h.Member, r)
			}
			seen[r.SourcePartition] = true
		}
	}
	for _, h := range hs {
		switch {
		case h.Generation < c.fence:
			c.stats.Dropped++
			c.fenced = append(c.fenced, h)
		case c.ids[h.ID]:
			c.stats.Duplicates++
		default:
			c.waiting = append(c.waiting, h)
			c.ids[h.ID] = true
		}
	}
	return nil
}

// checkMode fails unless h is of mode, with the files of its mode only:
// a committer landing a hand-over of another mode would land its
// positions without its rows.
func checkMode(h *HandOver, mode Mode) error {
	name := func(m Mode) string {
		if m == ModeAppend {
			return "append"
		}
		return string(m)
	}
	switch {
	case h.Mode != mode:
		return fmt.Errorf("a hand-over of %s mode to a committer of %s mode", name(h.Mode), name(mode))
	case h.Mode == ModeAppend && len(h.Changes) > 0:
		return fmt.Errorf("change files in an append hand-over")
	case h.Mode != ModeAppend && len(h.Files) > 0:
		return fmt.Errorf("data files in a hand-over of %s mode", h.Mode)
	}
	return nil
}

// Fence drops the waiting hand-overs of generations below gen, and those
// added later: call it with the group's generation whenever it moves, so
// that a member that lost its partitions in a rebalance lands nothing it
// wrote before (the new owner resumed from the table's positions).
func (c *Committer) Fence(gen int32) {
	if gen <= c.fence {
		return
	}
	c.fence = gen
	c.waiting = slices.DeleteFunc(c.waiting, func(h *HandOver) bool {
		if h.Generation < gen {
			c.stats.Dropped++
			c.fenced = append(c.fenced, h)
			delete(c.ids, h.ID)
			return true
		}
		return false
	})
}

// Stats returns what the committer did so far.
func (c *Committer) Stats() CommitterStats {
	st := c.stats
	st.Waiting = len(c.waiting)
	return st
}

// Waiting returns the IDs of the hand-overs waiting, in the order they
// were added.
func (c *Committer) Waiting() []string {
	out := make([]string, len(c.waiting))
	for i, h := range c.waiting {
		out[i] = h.ID
	}
	return out
}

// Table returns the latest table state the committer loaded or committed.
func (c *Committer) Table() *icetable.Table { return c.s.tbl }

// Close closes the committer; waiting hand-overs are forgotten (their
// files stay, their rows are replayed by the members that own them).
func (c *Committer) Close(ctx context.Context) error {
	c.waiting, c.ids = nil, map[string]bool{}
	return c.s.Close(ctx)
}

// errRangesMoved is the Summary error of a round whose plan no longer
// fits the table's positions: the round is planned again.
var errRangesMoved = errors.New("sink: the table's positions moved under the committer's plan")

// Commit lands, in one snapshot, every waiting hand-over whose ranges
// chain from the table's positions, and drops those that can no longer
// land (see [Committer]). With none to land it commits nothing and
// returns the zero Result. A round whose plan the table's positions
// moved under (another committer landed some of it) is planned again on
// the new state, within the retry policy's attempts. On error the
// hand-overs stay waiting (after a *commit.UnknownOutcomeError too: the
// next round finds what landed by the table's positions).
func (c *Committer) Commit(ctx context.Context) (Landing, error) {
	if c.s.closed {
		return Landing{}, ErrClosed
	}
	pol, err := c.s.cfg.policy.WithDefaults()
	if err != nil {
		return Landing{}, err
	}
	var out Landing
	c.removeChanges(ctx, c.fenced)
	c.fenced = nil
	for round := 1; ; round++ {
		if err := c.s.load(ctx); err != nil {
			return out, err
		}
		take, drop := c.plan(c.s.committed)
		c.drop(ctx, &out, drop)
		if len(take) == 0 {
			return out, nil
		}
		if c.beforeCommit != nil {
			c.beforeCommit()
		}
		var (
			res        commit.Result
			err        error
			unreadable *unreadableError
		)
		switch modeOf(c.s.cfg) {
		case ModeUpsert:
			res, err = c.applyChanges(ctx, take)
		case ModeKeyed:
			res, err = c.appendKeyed(ctx, take, round-1)
		default:
			res, err = c.append(ctx, take, handOverFiles(take), round-1, nil)
		}
		if errors.As(err, &unreadable) && round < pol.Attempts {
			c.s.cfg.log.Warn("sink committer: hand-overs dropped", slog.String("table", c.s.name), slog.Any("error", err))
			c.drop(ctx, &out, unreadable.bad)
			continue
		}
		if (errors.Is(err, errRangesMoved) || errors.Is(err, ErrKeyCommitted)) && round < pol.Attempts {
			c.stats.Replans++
			continue
		}
		if err != nil {
			return out, fmt.Errorf("sink: committer %s: %w", c.s.name, err)
		}
		c.forget(take)
		c.removeChanges(ctx, take)
		out.Result, out.Landed = res, take
		return out, nil
	}
}

// plan splits the waiting hand-overs, on a table holding now, into those
// to land in one snapshot (in an order in which their ranges chain) and
// those to drop.
func (c *Committer) plan(now marks) (take, drop []*HandOver) {
	specID, schemaID := c.s.spec.ID(), c.s.tbl.Schema().ID
	var cands []*HandOver
	for _, h := range c.waiting {
		stale := h.SpecID != specID || h.SchemaID != schemaID || slices.ContainsFunc(h.Ranges, func(r Range) bool {
			return r.From <= now.get(r.SourcePartition).Offset
		})
		if stale {
			drop = append(drop, h)
		} else {
			cands = append(cands, h)
		}
	}
	slices.SortStableFunc(cands, func(a, b *HandOver) int {
		if a.Generation != b.Generation {
			return int(b.Generation) - int(a.Generation) // the newer generation first
		}
		return strings.Compare(a.ID, b.ID)
	})
	// Each candidate is tried once in that order, and again whenever a
	// landed one ends one before the start of one of its ranges: linear
	// in the candidates' ranges, however long the members' chains.
	type start struct {
		sp   SourcePartition
		from int64
	}
	byStart := map[start][]int{} // candidates by the start of each of their ranges, in order
	queue := make([]int, len(cands))
	for i, h := range cands {
		queue[i] = i
		for _, r := range h.Ranges {
			k := start{r.SourcePartition, r.From}
			byStart[k] = append(byStart[k], i)
		}
	}
	m := maps.Clone(now)
	landed := make([]bool, len(cands))
	for q := 0; q < len(queue); q++ {
		i := queue[q]
		h := cands[i]
		if landed[i] || !fits(m, h) {
			continue
		}
		advance(m, h)
		take, landed[i] = append(take, h), true
		for _, r := range h.Ranges {
			queue = append(queue, byStart[start{r.SourcePartition, r.To + 1}]...)
		}
	}
	return take, drop
}

// fits reports whether every range of h starts one past m's position.
func fits(m marks, h *HandOver) bool {
	for _, r := range h.Ranges {
		if r.From != m.get(r.SourcePartition).Offset+1 {
			return false
		}
	}
	return true
}

// advance moves m's positions to the ends of h's ranges.
func advance(m marks, h *HandOver) {
	for _, r := range h.Ranges {
		m[r.SourcePartition] = Mark{Offset: r.To, MaxEventTime: r.MaxEventTime}
	}
}

// drop forgets hs, which can never land, and removes their change files.
func (c *Committer) drop(ctx context.Context, out *Landing, hs []*HandOver) {
	if len(hs) == 0 {
		return
	}
	out.Dropped = append(out.Dropped, hs...)
	c.stats.Dropped += int64(len(hs))
	c.forget(hs)
	c.removeChanges(ctx, hs)
}

// forget removes hs from the waiting hand-overs.
func (c *Committer) forget(hs []*HandOver) {
	if len(hs) == 0 {
		return
	}
	gone := make(map[*HandOver]bool, len(hs))
	for _, h := range hs {
		gone[h] = true
		delete(c.ids, h.ID)
	}
	c.waiting = slices.DeleteFunc(c.waiting, func(h *HandOver) bool { return gone[h] })
}

// append commits files (take's own, or the rows of take a keyed
// committer kept) with take's positions in one snapshot through the
// commit loop; every attempt checks on its table state that take's
// ranges chain from the positions it holds (else errRangesMoved, and
// nothing is committed), and check, when set, passes.
func (c *Committer) append(ctx context.Context, take []*HandOver, files []iceberg.DataFile, spent int, check func(*icetable.Table) error) (commit.Result, error) {
	s := c.s
	var rows int64
	for _, f := range files {
		rows += f.Count()
	}
	var merged marks
	res, err := snapshotcommit.Append(ctx, s.cat, snapshotcommit.AppendRequest{
		Target: snapshotcommit.Target{
			Op:        fmt.Sprintf("sink: commit %d hand-overs to %s", len(take), s.name),
			Ident:     s.ident,
			TableUUID: s.tbl.Metadata().TableUUID().String(),
			Spec:      s.spec,
			SchemaID:  s.tbl.Schema().ID,
			Token:     uuid.NewString(),
			Policy:    s.cfg.policy,
			Lock:      s.cfg.lock,
			Spent:     spent,
			Committed: func(tbl *icetable.Table) { s.tbl = tbl },
		},
		Files: files,
		Summary: func(tbl *icetable.Table) (iceberg.Properties, error) {
			m, err := chained(tbl, take)
			if err != nil {
				return nil, err
			}
			if check != nil {
				if err := check(tbl); err != nil {
					return nil, err
				}
			}
			merged = m
			return s.appendSummary(merged, files, rows)
		},
		TableProperties: func(tbl *icetable.Table) (iceberg.Properties, error) {
			v, err := merged.encode()
			props := positionProps(tbl.Metadata(), v)
			s.metadataPruning(tbl.Metadata(), props)
			return props, err
		},
	})
	if err != nil {
		return res, err
	}
	c.count(take, rows)
	s.cfg.log.Info("sink committer commit", slog.String("table", s.name), slog.Int64("snapshot", res.SnapshotID),
		slog.Int("hand_overs", len(take)), slog.Int64("rows", rows), slog.Int("files", len(files)), slog.Int("attempts", res.Attempts))
	// The positions the commit landed (from the table state it left, which
	// an unknown outcome resolved by the commit's token also sets) are the
	// watermark of the maintenance that follows: the partitions whose
	// window the landed hand-overs closed are compacted now, not a round
	// later.
	if m, err := tableMarks(s.tbl); err == nil {
		s.committed = m
	}
	s.maintain(ctx, files)
	return res, nil
}

// handOverFiles are the data files of hs.
func handOverFiles(hs []*HandOver) []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, h := range hs {
		out = append(out, h.Files...)
	}
	return out
}

// count counts the landing of take, holding rows rows.
func (c *Committer) count(take []*HandOver, rows int64) {
	c.stats.Commits++
	c.stats.Landed += int64(len(take))
	c.stats.Rows += rows
	c.s.stats.Commits++
	c.s.stats.Appended += rows
}

// chained is the positions of tbl advanced by the ranges of take, in
// order; errRangesMoved when one of them does not start one past them.
func chained(tbl *icetable.Table, take []*HandOver) (marks, error) {
	now, err := tableMarks(tbl)
	if err != nil {
		return nil, err
	}
	m := maps.Clone(now)
	for _, h := range take {
		if !fits(m, h) {
			return nil, fmt.Errorf("%w: hand-over %s of member %s (%s) does not start one past the table's positions",
				errRangesMoved, h.ID, h.Member, rangesText(h.Ranges))
		}
		advance(m, h)
	}
	return m, nil
}

// rangesText is rs for an error.
func rangesText(rs []Range) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return strings.Join(out, ", ")
}
