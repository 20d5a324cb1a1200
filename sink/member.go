package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/icerun/icerun/internal/snapshotcommit"
)

// ErrMember is returned by [Sink.Commit] on a member of a fleet
// ([WithHandOver]): its rows reach the table through a [Committer].
var ErrMember = errors.New("sink: a member hands its rows over to a committer; it does not commit")

// WithHandOver makes the sink a member of a fleet named id (unique among
// the fleet's members): it writes data files as it would alone, but never
// commits them; [Sink.HandOver] hands them over, with their ranges, to the
// fleet's [Committer], which commits the hand-overs of every member in one
// snapshot. The cadence options then only bound the pending batch;
// [Sink.Commit] fails with [ErrMember].
//
// A member appends; in upsert mode ([WithUpsert]) and keyed mode
// ([WithKey]) it hands its rows over as a [ChangeFile] instead, and the
// committer applies them as one changelog write, or appends those whose
// key the table does not hold, deciding on the table as its commit lands.
// It takes event time ([WithEventTime], late rows going to the side
// table as [WithLateRows] says) and a dead-letter table
// ([WithDeadLetter]): those side tables are written as a lone sink writes
// them, and [Sink.HandOver] commits their pending rows itself, in their
// own snapshots with their own positions, before it hands the main
// table's files over. Default: none (the sink commits its own rows).
func WithHandOver(id string) Option {
	return func(c *config) error {
		if id == "" {
			return fmt.Errorf("%w: hand-over member id is empty", ErrBadOption)
		}
		c.member = id
		return nil
	}
}

// memberState is what a member keeps of its hand-overs.
//
// Invariant: for every source partition the member handed over since it
// last (re)started, chain holds the offset it resumed from (the table's
// then) and the end of each hand-over since, ascending; the table's
// position of the source partition is one of them as long as no other
// writer took it: the committer lands a prefix of the chain, or nothing.
type memberState struct {
	id    string
	chain map[SourcePartition][]int64
	// maxUnlanded bounds a chain: a member whose hand-overs of a source
	// partition have not landed for this many hand-overs (one was lost:
	// its change file removed behind the committer's back, its control
	// record lost) is fenced and replays from the table's positions,
	// which exactly-once makes harmless.
	maxUnlanded int
}

// DefaultMaxUnlanded is how many hand-overs of a source partition a
// member makes without seeing one of them land before [Sink.HandOver]
// fences it (see [ErrFenced]).
const DefaultMaxUnlanded = 256

func (m *memberState) restart() { m.chain = map[SourcePartition][]int64{} }

// HandOver finishes the data files of the pending rows (in upsert mode,
// writes their change file) and returns them, with their ranges, as a hand-over of this member at generation (nil
// when nothing is pending); the rows are no longer pending, and the
// member goes on one past them. It commits nothing to the table.
//
// It first reads the table's positions: when one of the member's source
// partitions holds a position that is not on the member's chain (another
// writer took it, or the committer dropped one of its hand-overs) or
// none of its last [DefaultMaxUnlanded] hand-overs of it landed, or
// the table's schema or spec moved, the pending rows are dropped and it
// fails with [ErrFenced] or [ErrSchemaChanged]: call [Sink.Start] and
// resume from the positions it returns.
//
// Then it commits the pending late rows and dead letters to their side
// tables, each in a snapshot of its own recording the side table's
// positions and fenced by them, as a lone sink's [Sink.Commit] does
// before its own append: whatever the committer later lands covers only
// offsets whose late rows and dead letters are already in their side
// tables. A hand-over that never lands is replayed from the table's
// positions, and the side tables drop the rows of the replay they hold.
// When a side table's commit fails (a side commit of another member of
// the source partition fences it with [ErrFenced]), the pending rows
// are dropped, their files removed, and HandOver fails with that error:
// call [Sink.Start]. Any error of HandOver leaves nothing pending.
func (s *Sink) HandOver(ctx context.Context, generation int32) (*HandOver, error) {
	if s.closed {
		return nil, ErrClosed
	}
	if s.fleet == nil {
		return nil, fmt.Errorf("%w: %s: HandOver needs WithHandOver", ErrBadOption, s.name)
	}
	defer s.notePending()
	if err := s.checkChain(ctx); err != nil {
		return nil, errors.Join(err, s.discard(ctx))
	}
	if len(s.pending) == 0 {
		return nil, nil
	}
	if err := s.commitSides(ctx); err != nil {
		return nil, err
	}
	h := &HandOver{ID: uuid.NewString(), Member: s.fleet.id, Generation: generation,
		TableUUID: s.tbl.Metadata().TableUUID().String(), SchemaID: s.tbl.Schema().ID, SpecID: s.spec.ID(), Rows: s.rows, Mode: modeOf(s.cfg)}
	if s.files != nil {
		f, err := s.files.finish(context.WithoutCancel(ctx))
		s.files = nil
		if err != nil {
			s.reset()
			return nil, fmt.Errorf("sink: %s: write: %w", s.name, err)
		}
		h.Files = f
	}
	if len(s.changes) > 0 {
		cf, err := writeChangeFile(context.WithoutCancel(ctx), s.tbl, s.fleet.id, s.changes)
		if err != nil {
			s.reset()
			return nil, fmt.Errorf("sink: %s: write changes: %w", s.name, err)
		}
		h.Changes = []ChangeFile{cf}
	}
	for _, sp := range slices.SortedFunc(func(yield func(SourcePartition) bool) {
		for sp := range s.pending {
			if !yield(sp) {
				return
			}
		}
	}, compareSP) {
		from, to := s.committed.get(sp), s.pending[sp]
		h.Ranges = append(h.Ranges, Range{SourcePartition: sp, From: from.Offset + 1, To: to.Offset, MaxEventTime: to.MaxEventTime})
		c := s.fleet.chain[sp]
		if len(c) == 0 {
			c = []int64{from.Offset}
		}
		s.fleet.chain[sp] = append(c, to.Offset)
		s.committed[sp] = to // the next hand-over starts one past it, and redeliveries up to it are dropped
	}
	s.reset()
	return h, nil
}

// HandOverIfDue hands over (see [Sink.HandOver]) when the cadence of
// [WithCommitRows], [WithCommitBytes] or [WithCommitInterval] asks for
// it, and else returns nil.
func (s *Sink) HandOverIfDue(ctx context.Context, generation int32) (*HandOver, error) {
	if s.fleet == nil || !s.cadenceDue() {
		return nil, nil
	}
	return s.HandOver(ctx, generation)
}

// Member is the member id of [WithHandOver]; "" when the sink commits
// its own rows.
func (s *Sink) Member() string {
	if s.fleet == nil {
		return ""
	}
	return s.fleet.id
}

// checkChain fails when the table holds a position of one of the
// member's source partitions that is off its chain, or the table's schema
// or spec is no longer the one the member writes for; it drops the part
// of each chain the table already holds.
func (s *Sink) checkChain(ctx context.Context) error {
	tbl, err := snapshotcommit.Load(ctx, s.cat, s.ident)
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	md := tbl.Metadata()
	if md.TableUUID() != s.tbl.Metadata().TableUUID() || md.DefaultPartitionSpec() != s.spec.ID() || md.CurrentSchema().ID != s.tbl.Schema().ID {
		return fmt.Errorf("%w: %s: member %s", ErrSchemaChanged, s.name, s.fleet.id)
	}
	now, err := tableMarks(tbl)
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	var moved []string
	check := func(sp SourcePartition, c []int64) {
		at := now.get(sp).Offset
		i := slices.Index(c, at)
		if i < 0 {
			moved = append(moved, fmt.Sprintf("%s (table holds offset %d, off the member's hand-overs %v)", sp, at, c))
			return
		}
		if len(c[i:]) > s.fleet.maxUnlanded {
			moved = append(moved, fmt.Sprintf("%s (%d hand-overs after offset %d not landed)", sp, len(c[i:])-1, at))
			return
		}
		if len(c[i:]) > 1 {
			s.fleet.chain[sp] = c[i:]
		} else {
			delete(s.fleet.chain, sp) // all landed: the table's position is the base again
		}
	}
	for sp, c := range s.fleet.chain {
		check(sp, c)
	}
	for sp := range s.pending {
		if _, ok := s.fleet.chain[sp]; !ok {
			check(sp, []int64{s.committed.get(sp).Offset})
		}
	}
	if len(moved) > 0 {
		slices.Sort(moved)
		return fmt.Errorf("%w: %s: member %s: %s", ErrFenced, s.name, s.fleet.id, strings.Join(moved, ", "))
	}
	return nil
}

// compareSP orders source partitions by source, then partition.
func compareSP(a, b SourcePartition) int {
	if c := strings.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}
