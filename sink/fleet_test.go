package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// fleetSP is source partition p of the fleet tests' topic.
func fleetSP(p int32) sink.SourcePartition {
	return sink.SourcePartition{Source: "test:events", Partition: p}
}

// handOver writes the messages [from, to) of partition p to member m and
// hands them over at gen, through the wire form (as on a control topic).
func handOver(t *testing.T, m *sink.Sink, p int32, from, to int64, gen int32) []byte {
	t.Helper()
	ctx := context.Background()
	ms, offs := messages(p, from, to)
	rec := batch(ms)
	defer rec.Release()
	if err := m.Write(ctx, fleetSP(p), offs, rec); err != nil {
		t.Fatalf("member write p%d [%d, %d): %v", p, from, to, err)
	}
	h, err := m.HandOver(ctx, gen)
	if err != nil {
		t.Fatalf("member hand-over p%d [%d, %d): %v", p, from, to, err)
	}
	b, err := h.Marshal(m.Table())
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// receive decodes the hand-overs bs and adds them to c.
func receive(t *testing.T, c *sink.Committer, bs ...[]byte) {
	t.Helper()
	for _, b := range bs {
		h, err := sink.UnmarshalHandOver(b)
		if err != nil {
			t.Fatalf("unmarshal: %v", err)
		}
		if err := c.Add(h); err != nil {
			t.Fatalf("add: %v", err)
		}
	}
}

func mustCommitter(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *sink.Committer {
	t.Helper()
	c, err := sink.OpenCommitter(context.Background(), cat, ident, sink.WithoutSnapshotExpiry())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustMember(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, id string) *sink.Sink {
	t.Helper()
	return mustOpen(t, cat, ident, sink.WithHandOver(id))
}

// mustLand commits c's waiting hand-overs and fails unless it landed
// landed of them in one snapshot.
func mustLand(t *testing.T, c *sink.Committer, landed int) sink.Landing {
	t.Helper()
	l, err := c.Commit(context.Background())
	if err != nil {
		t.Fatalf("committer commit: %v", err)
	}
	if len(l.Landed) != landed || (landed > 0) != (l.SnapshotID != 0) {
		t.Fatalf("committer landed %d hand-overs (snapshot %d), want %d", len(l.Landed), l.SnapshotID, landed)
	}
	return l
}

// snapshots is the number of append snapshots of ident (the compactions
// that follow commits are not counted).
func snapshots(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary != nil && s.Summary.Operation == icetable.OpAppend {
			n++
		}
	}
	return n
}

// wantAll is the sorted ids of messages [0, ends[p]) of every partition p.
func wantAll(ends map[int32]int64) []string {
	var out []string
	for p, end := range ends {
		out = append(out, want(p, 0, end)...)
	}
	slices.Sort(out)
	return out
}

// checkRows fails unless ident holds exactly the messages [0, ends[p]) of
// every partition p, each once, row by row, and the positions end there.
func checkRows(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, ends map[int32]int64) {
	t.Helper()
	got, w := ids(t, cat, ident), wantAll(ends)
	if !slices.Equal(got, w) {
		var dup, missing []string
		for i := 1; i < len(got); i++ {
			if got[i] == got[i-1] {
				dup = append(dup, got[i])
			}
		}
		for _, id := range w {
			if _, ok := slices.BinarySearch(got, id); !ok {
				missing = append(missing, id)
			}
		}
		t.Fatalf("table holds %d rows, want %d: duplicates %v, missing %v", len(got), len(w), dup, missing)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	for p, end := range ends {
		if pos[fleetSP(p)] != end-1 {
			t.Errorf("position of %s = %d, want %d", fleetSP(p), pos[fleetSP(p)], end-1)
		}
	}
}

// 64 members hand over to one committer: one snapshot per interval holds
// every member's rows and positions, whatever the hand-overs' order, and
// duplicated or replayed hand-overs land nothing twice.
func TestFleetOneSnapshotPerInterval(t *testing.T) {
	const members, per = 64, 10
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	c := mustCommitter(t, cat, ident)
	ms := make([]*sink.Sink, members)
	for i := range ms {
		ms[i] = mustMember(t, cat, ident, fmt.Sprintf("m%d", i))
	}
	round := func(r int) [][]byte {
		out := make([][]byte, members)
		var wg sync.WaitGroup
		for i := range ms {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = handOver(t, ms[i], int32(i), int64(r*per), int64((r+1)*per), 1)
			}()
		}
		wg.Wait()
		return out
	}
	first := round(0)
	receive(t, c, first...)
	mustLand(t, c, members)

	// Interval 2: every hand-over delivered twice, the first interval's
	// replayed, member 0's held back.
	second := round(1)
	receive(t, c, second[1:]...)
	receive(t, c, second[1:]...)
	receive(t, c, first...)
	l := mustLand(t, c, members-1)
	if len(l.Dropped) != members {
		t.Errorf("interval 2 dropped %d hand-overs, want the %d replayed", len(l.Dropped), members)
	}

	// Interval 3: member 0's interval-3 hand-over before its interval-2
	// one, the rest in reverse order: all land, chained, in one snapshot.
	third := round(2)
	receive(t, c, third[0])
	slices.Reverse(third)
	receive(t, c, third[:members-1]...)
	receive(t, c, second[0])
	mustLand(t, c, members+1)
	mustLand(t, c, 0)

	if n := snapshots(t, cat, ident); n != 3 {
		t.Errorf("%d snapshots, want 3 (one per interval)", n)
	}
	ends := map[int32]int64{}
	for i := range members {
		ends[int32(i)] = 3 * per
	}
	checkRows(t, cat, ident, ends)
	if st := c.Stats(); st.Commits != 3 || st.Landed != 3*members || st.Waiting != 0 || st.Rows != 3*members*per {
		t.Errorf("committer stats = %+v, want 3 commits, %d landed, %d rows, none waiting", st, 3*members, 3*members*per)
	}
}

// A zombie committer (paused after planning, while another committer
// landed part of its plan) commits only what still fits the table's
// positions: the rest is dropped on its planning again, nothing twice.
func TestFleetZombieCommitter(t *testing.T) {
	const members = 8
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	zombie, live := mustCommitter(t, cat, ident), mustCommitter(t, cat, ident)
	var all [][]byte
	for i := range members {
		all = append(all, handOver(t, mustMember(t, cat, ident, fmt.Sprintf("m%d", i)), int32(i), 0, 10, 1))
	}
	receive(t, zombie, all...)
	receive(t, live, all[:members/2]...)
	paused := false
	zombie.SetBeforeCommit(func() {
		if !paused {
			paused = true
			mustLand(t, live, members/2)
		}
	})
	l := mustLand(t, zombie, members/2)
	if len(l.Dropped) != members/2 {
		t.Errorf("zombie dropped %d hand-overs, want the %d the live committer landed", len(l.Dropped), members/2)
	}
	if st := zombie.Stats(); st.Replans != 1 {
		t.Errorf("zombie replans = %d, want 1", st.Replans)
	}
	ends := map[int32]int64{}
	for i := range members {
		ends[int32(i)] = 10
	}
	checkRows(t, cat, ident, ends)
	if n := snapshots(t, cat, ident); n != 2 {
		t.Errorf("%d snapshots, want 2", n)
	}
}

// A rebalance moves a partition to a new member while the old one's last
// hand-over is in flight: whichever lands, the other is dropped, the
// loser finds its chain broken (ErrFenced) and resumes from the table.
func TestFleetRebalance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		oldFirst bool // the old generation's hand-over reaches the committer first, alone
	}{{"new generation wins", false}, {"old generation landed first", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := eventsTable(t, cat, "events")
			c := mustCommitter(t, cat, ident)
			a := mustMember(t, cat, ident, "a")
			receive(t, c, handOver(t, a, 0, 0, 10, 1))
			mustLand(t, c, 1)
			old := handOver(t, a, 0, 10, 20, 1) // in flight

			b := mustMember(t, cat, ident, "b") // generation 2 takes partition 0
			pos, err := b.Start(ctx, fleetSP(0))
			if err != nil || pos[fleetSP(0)] != 9 {
				t.Fatalf("Start = %v, %v; want 9", pos, err)
			}
			// The loser writes on and hands over: its chain is broken.
			fenced := func(m *sink.Sink, from, to int64) {
				t.Helper()
				ms, offs := messages(0, from, to)
				rec := batch(ms)
				defer rec.Release()
				if err := m.Write(ctx, fleetSP(0), offs, rec); err != nil {
					t.Fatal(err)
				}
				if _, err := m.HandOver(ctx, 2); !errors.Is(err, sink.ErrFenced) {
					t.Fatalf("loser's hand-over: %v, want ErrFenced", err)
				}
			}
			loser, end, dropped := b, int64(20), int64(0)
			if tc.oldFirst {
				receive(t, c, old)
				mustLand(t, c, 1)
				fenced(b, 10, 25)
			} else {
				receive(t, c, handOver(t, b, 0, 10, 25, 2))
				receive(t, c, old)
				mustLand(t, c, 1) // b's: the newer generation
				mustLand(t, c, 0) // a's, now stale, dropped
				fenced(a, 20, 25)
				loser, end, dropped = a, 25, 1
			}
			pos, err = loser.Start(ctx, fleetSP(0))
			if err != nil || pos[fleetSP(0)] != end-1 {
				t.Fatalf("loser Start = %v, %v; want %d", pos, err, end-1)
			}
			receive(t, c, handOver(t, loser, 0, end, 30, 3))
			mustLand(t, c, 1)
			checkRows(t, cat, ident, map[int32]int64{0: 30})
			if st := c.Stats(); st.Dropped != dropped {
				t.Errorf("committer dropped %d, want %d", st.Dropped, dropped)
			}
		})
	}
}

// Fence drops the hand-overs of older generations, waiting or to come.
func TestFleetFence(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	c := mustCommitter(t, cat, ident)
	a := mustMember(t, cat, ident, "a")
	h1 := handOver(t, a, 0, 0, 10, 1)
	receive(t, c, h1)
	c.Fence(2)
	receive(t, c, handOver(t, a, 0, 10, 20, 1))
	mustLand(t, c, 0)
	if st := c.Stats(); st.Dropped != 2 {
		t.Errorf("dropped %d, want 2", st.Dropped)
	}
	checkRows(t, cat, ident, map[int32]int64{})
}

func TestHandOverBad(t *testing.T) {
	for _, b := range []string{``, `{}`, `{"v":1,"id":"x","ranges":[]}`,
		`{"v":1,"id":"x","ranges":[{"source":"s","partition":0,"from":5,"to":4}]}`,
		`{"v":1,"id":"x","rows":3,"ranges":[{"source":"s","partition":0,"from":0,"to":4}]}`,
		`{"v":1,"id":"x","rows":0,"manifest":"AAAA","ranges":[{"source":"s","partition":0,"from":0,"to":4}]}`,
	} {
		if _, err := sink.UnmarshalHandOver([]byte(b)); !errors.Is(err, sink.ErrBadHandOver) {
			t.Errorf("UnmarshalHandOver(%s) = %v, want ErrBadHandOver", b, err)
		}
	}
}

func TestMemberOptions(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	// A keyed member takes the lone sink's key rule: the partition source
	// columns in the key.
	if _, err := sink.Open(ctx, cat, ident, sink.WithHandOver("m"), sink.WithKey("id")); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("Open(WithHandOver, WithKey(id)) = %v, want ErrBadOption", err)
	}
	if s, err := sink.Open(ctx, cat, ident, sink.WithHandOver("m"), sink.WithKey("id", "event_time")); err != nil {
		t.Errorf("Open(WithHandOver, WithKey(id, event_time)) = %v", err)
	} else {
		_ = s.Close(ctx)
	}
	if _, err := sink.Open(ctx, cat, ident, sink.WithHandOver("")); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("Open(WithHandOver(\"\")) = %v, want ErrBadOption", err)
	}
	m := mustMember(t, cat, ident, "m")
	mustWrite(t, m, sp0, 0, 5)
	if _, err := m.Commit(ctx); !errors.Is(err, sink.ErrMember) {
		t.Errorf("member Commit = %v, want ErrMember", err)
	}
	if _, err := sink.OpenCommitter(ctx, cat, ident, sink.WithHandOver("m")); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("OpenCommitter(WithHandOver) = %v, want ErrBadOption", err)
	}
	other := eventsTable(t, cat, "other")
	c := mustCommitter(t, cat, other)
	h, err := m.HandOver(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(h); !errors.Is(err, sink.ErrBadHandOver) {
		t.Errorf("Add(hand-over of another table) = %v, want ErrBadHandOver", err)
	}
	if n := snapshots(t, cat, ident); n != 0 {
		t.Errorf("member made %d snapshots, want 0", n)
	}
}
