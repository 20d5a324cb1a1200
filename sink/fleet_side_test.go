package sink_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// The fleet side tests run members with event time (late rows routed to
// the side table) and a dead-letter table. Every source partition carries
// the same stream: offsets 0-3 are rows of day 0, offset 4 a row of day 1
// (2 h into it: with 1 h of lateness day 0 closes), then rows of day 1,
// with a late row of day 0 at every multiple of 3 and a message that is
// not a row (a dead letter) at every offset 6 mod 7.

// sideKind is what the message at offset o is: "bad" (a dead letter),
// "late" (a row of the closed day 0) or "row".
func sideKind(o int64) string {
	switch {
	case o%7 == 6:
		return "bad"
	case o >= 4 && o%3 == 0:
		return "late"
	}
	return "row"
}

// sideMsg is the message at offset o of partition p (not a bad one).
func sideMsg(p int32, o int64) msg {
	at := day0.Add(12*time.Hour + time.Duration(o)*time.Second)
	if o >= 4 && sideKind(o) == "row" {
		at = day0.Add(26*time.Hour + time.Duration(o)*time.Second)
	}
	return msg{id: fmt.Sprintf("p%d-%d", p, o), seq: o, at: at}
}

// sideWant is the sorted ids of the messages of kind in [0, ends[p]) of
// every partition p.
func sideWant(kind string, ends map[int32]int64) []string {
	var out []string
	for p, end := range ends {
		for o := range end {
			if sideKind(o) == kind {
				out = append(out, fmt.Sprintf("p%d-%d", p, o))
			}
		}
	}
	slices.Sort(out)
	return out
}

// sideDead is the dead-letter table of the fleet side tests.
var sideDead = icetable.Identifier{"db", "events_fleet_dead"}

// sideMember opens a member with event time (1 h lateness, late rows to
// the side table) and the dead-letter table sideDead.
func sideMember(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, id string) *sink.Sink {
	t.Helper()
	return mustOpen(t, cat, ident, sink.WithHandOver(id), sink.WithEventTime("event_time", time.Hour),
		sink.WithDeadLetter(sideDead), sink.WithoutSnapshotExpiry())
}

// sideFeed hands member m the messages [from, to) of partition p: the
// rows to Write, the bad ones to Reject.
func sideFeed(t *testing.T, m *sink.Sink, p int32, from, to int64) {
	t.Helper()
	ctx := context.Background()
	var run []msg
	var offs []int64
	flush := func() {
		if len(run) == 0 {
			return
		}
		rec := batch(run)
		err := m.Write(ctx, fleetSP(p), offs, rec)
		rec.Release()
		if err != nil {
			t.Fatalf("member write p%d %v: %v", p, offs, err)
		}
		run, offs = nil, nil
	}
	for o := from; o < to; o++ {
		if sideKind(o) == "bad" {
			flush()
			if err := m.Reject(ctx, fleetSP(p), o, []byte(fmt.Sprintf("{bad p%d-%d", p, o)), "not JSON"); err != nil {
				t.Fatalf("member reject p%d@%d: %v", p, o, err)
			}
			continue
		}
		run, offs = append(run, sideMsg(p, o)), append(offs, o)
	}
	flush()
}

// sideHandOver feeds m the messages [from, to) of each partition of ps
// and hands them over at gen, in the wire form.
func sideHandOver(t *testing.T, m *sink.Sink, gen int32, from, to int64, ps ...int32) []byte {
	t.Helper()
	for _, p := range ps {
		sideFeed(t, m, p, from, to)
	}
	h, err := m.HandOver(context.Background(), gen)
	if err != nil {
		t.Fatalf("member %s hand-over [%d, %d) of %v: %v", m.Member(), from, to, ps, err)
	}
	b, err := h.Marshal(m.Table())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameIDs fails unless got holds exactly want (both sorted), naming the
// duplicates, the missing and the extra.
func sameIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	count := map[string]int{}
	for _, id := range got {
		count[id]++
	}
	var dup, missing, extra []string
	for id, k := range count {
		if k > 1 {
			dup = append(dup, id)
		}
		if _, ok := slices.BinarySearch(want, id); !ok {
			extra = append(extra, id)
		}
	}
	for _, id := range want {
		if count[id] == 0 {
			missing = append(missing, id)
		}
	}
	slices.Sort(dup)
	slices.Sort(extra)
	t.Errorf("%s holds %d rows, want %d: duplicates %v, missing %v, extra %v", what, len(got), len(want), dup, missing, extra)
}

// checkSides fails unless, for every partition p, the table holds each
// row of [0, ends[p]) once and its position ends there, the late table
// each late row once, and the dead-letter table each bad message once.
func checkSides(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, ends map[int32]int64) {
	t.Helper()
	sameIDs(t, "the table", ids(t, cat, ident), sideWant("row", ends))
	sameIDs(t, "the late table", ids(t, cat, table.StreamLateTable(ident)), sideWant("late", ends))
	var dead []string
	for _, d := range deadLetters(t, cat, sideDead) {
		if d.table != strings.Join(ident, ".") || d.source != fleetSP(0).Source {
			t.Errorf("dead letter %+v: not of %v, %s", d, ident, fleetSP(0).Source)
		}
		dead = append(dead, fmt.Sprintf("p%d-%d", d.partition, d.offset))
	}
	slices.Sort(dead)
	sameIDs(t, "the dead-letter table", dead, sideWant("bad", ends))
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	next := map[int32]int64{} // one past each partition's position
	for p := range ends {
		next[p] = pos[fleetSP(p)] + 1
	}
	if !maps.Equal(next, ends) {
		t.Errorf("the table's positions end before %v, want %v", next, ends)
	}
}

// sideSize is the length of one interval of the fleet side tests: every
// interval holds rows, late rows and dead letters.
func sideSize() int64 {
	if testing.Short() {
		return 14
	}
	return 42
}

// sideFleet is a table, its committer and member "a", which handed over
// [0, n) of its partitions, landed.
type sideFleet struct {
	cat   catalog.Catalog
	dir   string
	ident icetable.Identifier
	c     *sink.Committer
	a     *sink.Sink
	n     int64
}

func newSideFleet(t *testing.T, ps ...int32) sideFleet {
	t.Helper()
	f := sideFleet{n: sideSize()}
	f.cat, f.dir = catalogtest.New(t)
	f.ident = eventsTable(t, f.cat, "events")
	f.c = mustCommitter(t, f.cat, f.ident)
	f.a = sideMember(t, f.cat, f.ident, "a")
	receive(t, f.c, sideHandOver(t, f.a, 1, 0, f.n, ps...))
	mustLand(t, f.c, 1)
	return f
}

// A hand-over the committer drops (its member's generation was fenced)
// after the member committed its late rows and dead letters: the member
// goes on and hands over again (its side rows commit, its hand-over
// waits behind the gap), then starts again from the table, as a
// rebalance makes it, and replays. The side tables drop the replayed
// late rows and dead letters they hold; every row, late row and dead
// letter is in its table once.
func TestFleetSideTablesAfterDroppedHandOver(t *testing.T) {
	ctx := context.Background()
	f := newSideFleet(t, 0, 1)
	cat, ident, c, m, n := f.cat, f.ident, f.c, f.a, f.n
	receive(t, c, sideHandOver(t, m, 1, n, 2*n, 0, 1)) // its side rows are committed
	c.Fence(2)                                         // and the committer drops it
	mustLand(t, c, 0)
	gap := sideHandOver(t, m, 2, 2*n, 3*n, 0, 1) // chains on the dropped one: never lands
	receive(t, c, gap)
	mustLand(t, c, 0)
	if st := c.Stats(); st.Dropped != 1 || st.Waiting != 1 {
		t.Fatalf("committer stats %+v, want 1 dropped and 1 waiting", st)
	}

	pos, err := m.Start(ctx, fleetSP(0), fleetSP(1))
	if err != nil || pos[fleetSP(0)] != n-1 || pos[fleetSP(1)] != n-1 {
		t.Fatalf("Start = %v, %v; want both at %d", pos, err, n-1)
	}
	receive(t, c, sideHandOver(t, m, 2, n, 4*n, 0, 1))
	mustLand(t, c, 1)
	if l := mustLand(t, c, 0); len(l.Dropped) != 1 || c.Stats().Waiting != 0 {
		t.Errorf("dropped %d hand-overs, want the one behind the gap", len(l.Dropped))
	}
	checkSides(t, cat, ident, map[int32]int64{0: 4 * n, 1: 4 * n})
}

// A member crashes after its side tables' commits and before its hand-over
// reaches the control topic: a new member (a new process) starts from the
// table and replays. The side tables already hold the late rows and dead
// letters of the replay and drop them; the table gets every row once.
func TestFleetSideTablesAfterCrashBeforeHandOver(t *testing.T) {
	ctx := context.Background()
	f := newSideFleet(t, 0)
	cat, dir, ident, c, n := f.cat, f.dir, f.ident, f.c, f.n
	_ = sideHandOver(t, f.a, 1, n, 2*n, 0) // the side commits landed; the hand-over is lost with the process
	late, dead := catalogtest.Snapshots(t, cat, table.StreamLateTable(ident)), catalogtest.Snapshots(t, cat, sideDead)

	again := sideMember(t, catalogtest.Open(t, dir), ident, "a")
	pos, err := again.Start(ctx, fleetSP(0))
	if err != nil || pos[fleetSP(0)] != n-1 {
		t.Fatalf("Start = %v, %v; want %d", pos, err, n-1)
	}
	sideFeed(t, again, 0, n, 2*n)
	if st, w := again.Stats(), len(sideWant("late", map[int32]int64{0: 2 * n}))-len(sideWant("late", map[int32]int64{0: n})); st.Late != int64(w) {
		t.Errorf("the replay routed %d late rows, want those of [%d, %d)", st.Late, n, 2*n)
	}
	h, err := again.HandOver(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if nl, nd := catalogtest.Snapshots(t, cat, table.StreamLateTable(ident)), catalogtest.Snapshots(t, cat, sideDead); nl != late || nd != dead {
		t.Errorf("the replay's hand-over committed to the side tables (%d, %d snapshots; want %d, %d): they held its rows", nl, nd, late, dead)
	}
	if err := c.Add(h); err != nil {
		t.Fatal(err)
	}
	mustLand(t, c, 1)
	receive(t, c, sideHandOver(t, again, 2, 2*n, 3*n, 0))
	mustLand(t, c, 1)
	checkSides(t, cat, ident, map[int32]int64{0: 3 * n})
}

// A zombie member (a rebalance gave its partition to another, and it does
// not know yet) hands over beside the new owner. Its side commits are
// fenced by the side tables' positions like any writer's: whichever
// member commits a side table first, the other's side commit of the same
// offsets fails with ErrFenced, that member starts again from the tables
// and the replay drops what the side tables hold. The zombie's hand-overs
// are dropped by the committer's fence. Every row, late row and dead
// letter lands once.
func TestFleetSideTablesZombieMember(t *testing.T) {
	for _, zombieFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("zombie side commit first=%v", zombieFirst), func(t *testing.T) {
			ctx := context.Background()
			f := newSideFleet(t, 0)
			cat, ident, c, a, n := f.cat, f.ident, f.c, f.a, f.n
			sideFeed(t, a, 0, n, 2*n) // pending on the zombie

			b := sideMember(t, cat, ident, "b") // generation 2 takes partition 0
			if pos, err := b.Start(ctx, fleetSP(0)); err != nil || pos[fleetSP(0)] != n-1 {
				t.Fatalf("Start = %v, %v; want %d", pos, err, n-1)
			}
			c.Fence(2)
			sideFeed(t, b, 0, n, 2*n) // b's side sinks read the side tables' positions now
			// fenced checks that b's hand-over of [from, to) fails with
			// ErrFenced (the zombie committed a side table under it) and
			// drops what it held; b then starts again, replays and lands.
			fenced := func(from, to int64) {
				t.Helper()
				if _, err := b.HandOver(ctx, 2); !errors.Is(err, sink.ErrFenced) {
					t.Fatalf("new owner's hand-over of [%d, %d) after the zombie's side commit: %v, want ErrFenced", from, to, err)
				}
				if b.Pending() != 0 {
					t.Errorf("%d rows still pending after the failed hand-over", b.Pending())
				}
				if _, err := b.Start(ctx, fleetSP(0)); err != nil {
					t.Fatal(err)
				}
				receive(t, c, sideHandOver(t, b, 2, from, to, 0))
				mustLand(t, c, 1) // b's; the zombie's was fenced
			}
			if zombieFirst {
				h, err := a.HandOver(ctx, 1) // its chain still holds the table's position: its side rows commit
				if err != nil {
					t.Fatalf("zombie hand-over: %v", err)
				}
				if err := c.Add(h); err != nil {
					t.Fatal(err)
				}
				fenced(n, 2*n)
				// The zombie's chain now meets the table's position (b landed
				// the same range): its next side commit lands and fences b's.
				sideFeed(t, b, 0, 2*n, 3*n)
				receive(t, c, sideHandOver(t, a, 1, 2*n, 3*n, 0))
				fenced(2*n, 3*n)
			} else {
				receive(t, c, sideHandOver(t, b, 2, n, 2*n, 0))
				mustLand(t, c, 1)
				late := catalogtest.Snapshots(t, cat, table.StreamLateTable(ident))
				if _, err := a.HandOver(ctx, 1); !errors.Is(err, sink.ErrFenced) {
					t.Fatalf("zombie hand-over after the new owner's landed: %v, want ErrFenced", err)
				}
				if nl := catalogtest.Snapshots(t, cat, table.StreamLateTable(ident)); nl != late {
					t.Errorf("the fenced zombie committed to the late table")
				}
				receive(t, c, sideHandOver(t, b, 2, 2*n, 3*n, 0))
				mustLand(t, c, 1)
			}
			if st := c.Stats(); st.Dropped != map[bool]int64{true: 2, false: 0}[zombieFirst] {
				t.Errorf("committer dropped %d, want the zombie's hand-overs", st.Dropped)
			}
			checkSides(t, cat, ident, map[int32]int64{0: 3 * n})
		})
	}
}

// A hand-over delivered twice, and the control topic replayed: the side
// tables took the late rows and dead letters once, at the member's
// hand-over, and the committer lands each hand-over once.
func TestFleetSideTablesDuplicateHandOver(t *testing.T) {
	n := sideSize()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	c := mustCommitter(t, cat, ident)
	a, b := sideMember(t, cat, ident, "a"), sideMember(t, cat, ident, "b")
	a1, b1 := sideHandOver(t, a, 1, 0, n, 0), sideHandOver(t, b, 1, 0, n, 1)
	receive(t, c, a1, a1, b1)
	mustLand(t, c, 2)
	a2 := sideHandOver(t, a, 1, n, 2*n, 0)
	receive(t, c, a2, a1, b1, a2)
	l := mustLand(t, c, 1)
	receive(t, c, a1, b1, a2) // the control topic read again
	mustLand(t, c, 0)
	if len(l.Dropped) != 2 || c.Stats().Dropped != 5 {
		t.Errorf("dropped %d, then %d in all; want 2, then 5", len(l.Dropped), c.Stats().Dropped)
	}
	if n := catalogtest.Snapshots(t, cat, table.StreamLateTable(ident)); n != 3 {
		t.Errorf("late table: %d snapshots, want 3 (one per hand-over)", n)
	}
	checkSides(t, cat, ident, map[int32]int64{0: 2 * n, 1: n})
}

// errSideDown is the error of a sideDownCatalog's commits.
var errSideDown = errors.New("side table's catalog down")

// sideDownCatalog fails the commits to one table while down is set.
type sideDownCatalog struct {
	catalog.Catalog
	ident icetable.Identifier
	down  atomic.Bool
}

func (c *sideDownCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.down.Load() && slices.Equal(ident, c.ident) {
		return nil, "", errSideDown
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// A side table's commit fails during a hand-over (the late table's landed,
// the dead-letter table's did not): the hand-over fails with that error,
// nothing stays pending, no data file of the table is left behind, and
// the member starts again from the table: the replay's late rows are
// dropped by the late table, its dead letters land, every row once.
func TestFleetSideCommitFails(t *testing.T) {
	ctx := context.Background()
	n := sideSize()
	base, dir := catalogtest.New(t)
	ident := eventsTable(t, base, "events")
	c := mustCommitter(t, base, ident)
	cat := &sideDownCatalog{Catalog: catalogtest.Open(t, dir), ident: sideDead}
	m := sideMember(t, cat, ident, "a")
	receive(t, c, sideHandOver(t, m, 1, 0, n, 0))
	mustLand(t, c, 1)

	sideFeed(t, m, 0, n, 2*n)
	cat.down.Store(true)
	h, err := m.HandOver(ctx, 1)
	cat.down.Store(false)
	if !errors.Is(err, errSideDown) || h != nil {
		t.Fatalf("hand-over with the dead-letter table down = %v, %v; want its error", h, err)
	}
	if m.Pending() != 0 {
		t.Errorf("%d rows pending after the failed hand-over, want none", m.Pending())
	}
	tbl, err := base.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if orphans := catalogtest.UnreferencedDataFiles(t, base, ident, strings.TrimPrefix(tbl.Location(), "file://")); len(orphans) > 0 {
		t.Errorf("the failed hand-over left the table's data files: %v", orphans)
	}
	if _, err := m.Start(ctx, fleetSP(0)); err != nil {
		t.Fatal(err)
	}
	receive(t, c, sideHandOver(t, m, 1, n, 2*n, 0))
	mustLand(t, c, 1)
	checkSides(t, base, ident, map[int32]int64{0: 2 * n})
}

// A committer with event time compacts, after the commit whose hand-overs
// move the watermark past a day's end, the day its hand-overs appended
// small files to, as a lone sink does after its own commit.
func TestFleetCommitterCompactsClosedPartitions(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	c, err := sink.OpenCommitter(ctx, cat, ident, sink.WithoutSnapshotExpiry(), sink.WithEventTime("event_time", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sideMember(t, cat, ident, "a"), sideMember(t, cat, ident, "b")
	receive(t, c, sideHandOver(t, a, 1, 0, 4, 0), sideHandOver(t, b, 1, 0, 4, 1)) // day 0, two files
	mustLand(t, c, 2)
	if got := dataFiles(t, c.Table(), "2026-07-14"); got != 2 {
		t.Fatalf("day 0 holds %d files before it closes, want 2", got)
	}
	receive(t, c, sideHandOver(t, a, 1, 4, 6, 0)) // day 1, 2 h in: day 0 closes
	mustLand(t, c, 1)
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if got := dataFiles(t, tbl, "2026-07-14"); got != 1 {
		t.Errorf("day 0 holds %d files after the commit that closed it, want 1 (compacted)", got)
	}
	sameIDs(t, "the table", ids(t, cat, ident), sideWant("row", map[int32]int64{0: 6, 1: 4}))
}
