package sink_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// fleetChaos is one in-process fleet under chaos: members, one per
// source partition, hand over to a live committer through a lossy,
// duplicating, reordering channel, while members and committers die.
type fleetChaos struct {
	t     *testing.T
	rng   *rand.Rand
	cat   catalog.Catalog
	ident icetable.Identifier
	gen   int32
	live  *sink.Committer
	// zombie is a committer that lost the control partition while
	// paused: it commits what it holds once more, a round later, before
	// or after its successor.
	zombie   *sink.Committer
	members  []*sink.Sink
	next     []int64    // per member: the next offset it writes
	late     [][]byte   // hand-overs delayed to the next round
	sent     [][][]byte // hand-overs delivered, per round (the control topic)
	landings int        // snapshots the committers committed
	// zombieLanded counts the hand-overs zombies landed.
	zombieLanded int
	restarts     int   // members that called Start after a fence or a rebalance
	per          int64 // messages per member per round
	kills        struct{ members, committers, zombies, lost, dup, delayed int }
	// planned are the rounds of the deaths every seed has at least one
	// of: a member's, a committer's, a zombie's.
	planned struct{ member, committer, zombie int }
}

// member opens member i afresh (a new process: a new member id) and
// resumes it from the table's position.
func (f *fleetChaos) member(i int) {
	m := mustOpen(f.t, f.cat, f.ident, sink.WithHandOver(fmt.Sprintf("m%d-%d", i, f.rng.Int64())))
	m.SetMaxUnlanded(3)
	f.members[i] = m
	f.start(i)
}

// start resumes member i from the table's position of its partition.
func (f *fleetChaos) start(i int) {
	pos, err := f.members[i].Start(context.Background(), fleetSP(int32(i)))
	if err != nil {
		f.t.Fatalf("member %d Start: %v", i, err)
	}
	f.next[i] = pos[fleetSP(int32(i))] + 1
}

// handOver writes member i's next messages and hands them over; a fenced
// member resumes from the table and writes again, as `icerun sink` does.
func (f *fleetChaos) handOver(i int, to int64) ([]byte, error) {
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		m := f.members[i]
		if f.next[i] < to {
			ms, offs := messages(int32(i), f.next[i], to)
			rec := batch(ms)
			err := m.Write(ctx, fleetSP(int32(i)), offs, rec)
			rec.Release()
			if err != nil {
				return nil, fmt.Errorf("member %d write: %w", i, err)
			}
		}
		h, err := m.HandOver(ctx, f.gen)
		if errors.Is(err, sink.ErrFenced) && attempt == 0 {
			pos, err := m.Start(ctx, fleetSP(int32(i)))
			if err != nil {
				return nil, fmt.Errorf("member %d Start: %w", i, err)
			}
			f.next[i] = pos[fleetSP(int32(i))] + 1
			continue
		}
		if err != nil || h == nil {
			return nil, err
		}
		f.next[i] = to
		return h.Marshal(m.Table())
	}
}

// rebalance moves the group to a new generation: the live committer
// fences the older ones and every member resumes from the table.
func (f *fleetChaos) rebalance() {
	f.gen++
	f.live.Fence(f.gen)
	for i := range f.members {
		f.start(i)
		f.restarts++
	}
}

// round runs one interval: every member hands over up to to, the
// channel loses, duplicates and delays some hand-overs, a member or a
// committer may die, and the live committer (and a zombie) commit.
func (f *fleetChaos) round(to int64, chaos bool) {
	t := f.t
	r := len(f.sent)
	if chaos && (r == f.planned.member || f.rng.IntN(12) == 0) { // a member dies with rows written, not handed over
		i := f.rng.IntN(len(f.members))
		ms, offs := messages(int32(i), f.next[i], to)
		rec := batch(ms)
		_ = f.members[i].Write(context.Background(), fleetSP(int32(i)), offs, rec)
		rec.Release()
		f.kills.members++
		f.member(i)
		f.rebalance()
	}
	out := make([][]byte, len(f.members))
	errs := make([]error, len(f.members))
	var wg sync.WaitGroup
	for i := range f.members {
		wg.Go(func() { out[i], errs[i] = f.handOver(i, to) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	deliver := append([][]byte(nil), f.late...)
	f.late = nil
	for _, b := range out {
		switch {
		case b == nil:
		case chaos && f.rng.IntN(25) == 0:
			f.kills.lost++ // the control record is lost
		case chaos && f.rng.IntN(12) == 0:
			f.kills.delayed++
			f.late = append(f.late, b)
		case chaos && f.rng.IntN(8) == 0:
			f.kills.dup++
			deliver = append(deliver, b, b)
		default:
			deliver = append(deliver, b)
		}
	}
	f.rng.Shuffle(len(deliver), func(a, b int) { deliver[a], deliver[b] = deliver[b], deliver[a] })
	f.sent = append(f.sent, deliver)
	receive(t, f.live, deliver...)
	zombie := f.zombie // paused last round: it commits after its successor
	f.zombie = nil
	switch {
	case chaos && (r == f.planned.committer || f.rng.IntN(10) == 0): // the committer dies; its successor replays the control topic
		f.kills.committers++
		f.successor()
	case chaos && zombie == nil && (r == f.planned.zombie || f.rng.IntN(10) == 0): // it pauses past its session
		f.kills.zombies++
		f.zombie = f.live
		f.successor()
		return // the successor's first commit is next round's, as is the zombie's
	}
	// A zombie resumes before or after its successor's commit: it lands
	// what still fits the table's positions, and the other drops it.
	zombieFirst := zombie != nil && f.rng.IntN(2) == 0
	if zombieFirst {
		f.zombieLanded += f.commit(zombie)
	}
	f.commit(f.live)
	if zombie != nil && !zombieFirst {
		f.zombieLanded += f.commit(zombie)
	}
}

// successor opens the committer that takes the control partition over:
// it reads the control topic from two rounds back and fences the older
// generations.
func (f *fleetChaos) successor() {
	f.live = mustCommitter(f.t, f.cat, f.ident)
	f.live.Fence(f.gen)
	for _, r := range f.sent[max(0, len(f.sent)-2):] {
		receive(f.t, f.live, r...)
	}
}

// commit runs one round of committer c and returns how many hand-overs
// it landed.
func (f *fleetChaos) commit(c *sink.Committer) int {
	l, err := c.Commit(context.Background())
	if err != nil {
		f.t.Fatalf("committer commit: %v", err)
	}
	if l.SnapshotID != 0 {
		f.landings++
	}
	return len(l.Landed)
}

// Many members in one process, members and committers dying at seeded
// random rounds: members die with rows written and not handed over
// (the group moves to a new generation, every member resumes from the
// table), committers die (the successor replays the control topic) or
// pause past their session and commit what they held after their
// successor (zombies), and the control channel loses, duplicates,
// delays and reorders hand-overs. After the chaos stops and the members
// catch up, the table holds every message exactly once, row by row, its
// positions on each member's last offset, and every snapshot is one
// committer's commit of one round.
func TestFleetChaos(t *testing.T) {
	members, rounds := 64, 14
	if testing.Short() {
		members, rounds = 16, 10
	}
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			f := &fleetChaos{t: t, rng: rand.New(rand.NewPCG(seed, 38)), cat: cat, ident: eventsTable(t, cat, "events"), gen: 1, per: 5,
				members: make([]*sink.Sink, members), next: make([]int64, members)}
			plan := f.rng.Perm(rounds - 1)
			f.planned.member, f.planned.committer, f.planned.zombie = plan[0], plan[1], plan[2]
			f.live = mustCommitter(t, cat, f.ident)
			for i := range f.members {
				f.member(i)
			}
			end := int64(0)
			for range rounds {
				end += f.per
				f.round(end, true)
			}
			// Catching up: a member whose hand-over was lost is fenced
			// after three more that cannot land, then replays.
			for range 6 {
				end += f.per
				f.round(end, false)
			}
			ends := map[int32]int64{}
			for i := range members {
				ends[int32(i)] = end
			}
			checkRows(t, cat, f.ident, ends)
			if n := snapshots(t, cat, f.ident); n != f.landings {
				t.Errorf("%d snapshots, want %d (one per committer round that landed)", n, f.landings)
			}
			if f.landings > rounds+6+f.kills.zombies {
				t.Errorf("%d snapshots in %d rounds with %d zombies: more than one per round", f.landings, rounds+6, f.kills.zombies)
			}
			k := f.kills
			if k.members == 0 || k.committers+k.zombies == 0 || k.lost == 0 || k.dup == 0 || k.delayed == 0 {
				t.Errorf("seed %d exercised too little: %+v", seed, k)
			}
			t.Logf("%d members, %d rounds: %+v, %d restarts, %d snapshots, %d hand-overs landed by zombies", members, rounds+6, k, f.restarts, f.landings, f.zombieLanded)
		})
	}
}
