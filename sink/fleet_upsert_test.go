package sink_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// upsertMember opens member id of a fleet in upsert mode on ident.
func upsertMember(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, id string) *sink.Sink {
	t.Helper()
	return mustOpen(t, cat, ident, sink.WithHandOver(id), sink.WithUpsert(upsertSpec))
}

// upsertCommitter opens the committer of a fleet in upsert mode on ident.
func upsertCommitter(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *sink.Committer {
	t.Helper()
	c, err := sink.OpenCommitter(context.Background(), cat, ident, sink.WithoutSnapshotExpiry(), sink.WithUpsert(upsertSpec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// handOverEvents writes evs to member m as the messages at offsets from,
// from+1, ... of partition p and hands them over at gen, through the wire
// form.
func handOverEvents(t *testing.T, m *sink.Sink, p int32, from int64, gen int32, evs ...orderEvent) []byte {
	t.Helper()
	rec := orderBatch(evs)
	defer rec.Release()
	return handOverRows(t, m, p, from, gen, sink.ModeUpsert, rec)
}

// handOverRows writes rec to member m (of mode, upsert or keyed) as the
// messages at offsets from, from+1, ... of partition p, hands them over
// at gen and checks that they went over as one change file; it returns
// the hand-over's wire form.
func handOverRows(t *testing.T, m *sink.Sink, p int32, from int64, gen int32, mode sink.Mode, rec arrow.RecordBatch) []byte {
	t.Helper()
	ctx := context.Background()
	offs := make([]int64, rec.NumRows())
	for i := range offs {
		offs[i] = from + int64(i)
	}
	if err := m.Write(ctx, fleetSP(p), offs, rec); err != nil {
		t.Fatalf("member write p%d at %d: %v", p, from, err)
	}
	h, err := m.HandOver(ctx, gen)
	if err != nil {
		t.Fatalf("member hand-over p%d at %d: %v", p, from, err)
	}
	if h.Mode != mode || len(h.Files) != 0 || len(h.Changes) != 1 || h.Changes[0].Rows != rec.NumRows() {
		t.Fatalf("hand-over: mode %q, %d data files, change files %+v; want mode %q, one change file of %d rows", h.Mode, len(h.Files), h.Changes, mode, rec.NumRows())
	}
	b, err := h.Marshal(m.Table())
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// changeFiles lists the change files under dir.
func changeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "changes-") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// positionsOf is the table's position of partitions 0 and 1.
func positionsOf(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) [2]int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return [2]int64{pos[fleetSP(0)], pos[fleetSP(1)]}
}

// Two members in upsert mode hand their changes over, one committer
// applies each interval's as one changelog write in one snapshot: the
// table keeps each key's latest state by its order, whatever the member
// and interval its events came through (late older events, a delete then
// a late event, ties within a hand-over), and the change files are gone
// once applied.
func TestFleetUpsertOrder(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			cat, dir := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			c := upsertCommitter(t, cat, ident)
			a, b := upsertMember(t, cat, ident, "a"), upsertMember(t, cat, ident, "b")
			interval := func(landed int, fromA int64, evA []orderEvent, fromB int64, evB []orderEvent) {
				t.Helper()
				receive(t, c, handOverEvents(t, a, 0, fromA, 1, evA...), handOverEvents(t, b, 1, fromB, 1, evB...))
				mustLand(t, c, landed)
				if left := changeFiles(t, dir); len(left) > 0 {
					t.Errorf("change files left after the commit: %v", left)
				}
			}
			interval(2,
				0, []orderEvent{{"a", "created", time.Hour}, {"b", "created", time.Hour}, {"c", "first", time.Hour}, {"c", "second", time.Hour}},
				0, []orderEvent{{"a", "shipped", 3 * time.Hour}})
			interval(2,
				4, []orderEvent{{"b", "deleted", 4 * time.Hour}},
				1, []orderEvent{{"a", "paid", 2 * time.Hour}})
			interval(2,
				5, []orderEvent{{"b", "paid", 2 * time.Hour}},
				2, []orderEvent{{"d", "created", time.Hour}})
			interval(2, // every change stale: the positions alone
				6, []orderEvent{{"a", "created", 0}},
				3, []orderEvent{{"d", "created", 0}})
			if got, w := states(t, cat, ident), map[string]string{"a": "shipped", "c": "second", "d": "created"}; !maps.Equal(got, w) {
				t.Errorf("table = %v, want %v", got, w)
			}
			if got := positionsOf(t, cat, ident); got != [2]int64{6, 3} {
				t.Errorf("positions = %v, want [6 3]", got)
			}
			if st := c.Stats(); st.Commits != 4 || st.Landed != 8 || st.Rows != 11 {
				t.Errorf("committer stats = %+v, want 4 commits, 8 landed, 11 rows", st)
			}
		})
	}
}

// A hand-over delivered twice, a zombie committer holding hand-overs the
// live one landed, and a hand-over whose change file is gone: nothing
// lands twice, the unreadable hand-over is dropped, and its member, whose
// hand-overs then stop landing, is fenced and replays from the table's
// positions.
func TestFleetUpsertDuplicatesAndZombie(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, true)
	live, zombie := upsertCommitter(t, cat, ident), upsertCommitter(t, cat, ident)
	a, b := upsertMember(t, cat, ident, "a"), upsertMember(t, cat, ident, "b")

	ha := handOverEvents(t, a, 0, 0, 1, orderEvent{"a", "created", time.Hour}, orderEvent{"x", "created", time.Hour})
	hb := handOverEvents(t, b, 1, 0, 1, orderEvent{"b", "created", time.Hour})
	receive(t, live, ha, hb, ha)
	receive(t, zombie, ha, hb)
	mustLand(t, live, 2)
	l := mustLand(t, zombie, 0) // both stale on the zombie: dropped, not landed again
	if len(l.Dropped) != 2 {
		t.Errorf("zombie dropped %d hand-overs, want 2", len(l.Dropped))
	}

	// a's next hand-over loses its change file before the commit.
	ha2 := handOverEvents(t, a, 0, 2, 1, orderEvent{"a", "paid", 2 * time.Hour}, orderEvent{"x", "deleted", 2 * time.Hour})
	for _, f := range changeFiles(t, dir) {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	hb2 := handOverEvents(t, b, 1, 1, 1, orderEvent{"b", "paid", 2 * time.Hour})
	receive(t, live, ha2, hb2)
	l = mustLand(t, live, 1)
	if len(l.Dropped) != 1 {
		t.Errorf("dropped %d hand-overs, want a's, whose change file is gone", len(l.Dropped))
	}
	if got := positionsOf(t, cat, ident); got != [2]int64{1, 1} {
		t.Fatalf("positions = %v, want [1 1]: a's second hand-over never landed", got)
	}

	// a's hand-overs no longer land (the committer waits for the lost
	// one): past its bound of hand-overs not landed, a is fenced, and
	// restarts from the table and replays.
	a.SetMaxUnlanded(1)
	rec := orderBatch([]orderEvent{{"a", "shipped", 3 * time.Hour}})
	err := a.Write(ctx, fleetSP(0), []int64{4}, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.HandOver(ctx, 1); !errors.Is(err, sink.ErrFenced) {
		t.Fatalf("a's hand-over after its dropped one: %v, want ErrFenced", err)
	}
	pos, err := a.Start(ctx, fleetSP(0))
	if err != nil || pos[fleetSP(0)] != 1 {
		t.Fatalf("a.Start = %v, %v; want 1", pos, err)
	}
	receive(t, live, handOverEvents(t, a, 0, 2, 1,
		orderEvent{"a", "paid", 2 * time.Hour}, orderEvent{"x", "deleted", 2 * time.Hour}, orderEvent{"a", "shipped", 3 * time.Hour}))
	mustLand(t, live, 1)
	if got, w := states(t, cat, ident), map[string]string{"a": "shipped", "b": "paid"}; !maps.Equal(got, w) {
		t.Errorf("table = %v, want %v", got, w)
	}
	if got := positionsOf(t, cat, ident); got != [2]int64{4, 1} {
		t.Errorf("positions = %v, want [4 1]", got)
	}
	if left := changeFiles(t, dir); len(left) > 0 {
		t.Errorf("change files left: %v", left)
	}
}

// A committer takes hand-overs of its own mode only: an append
// committer landing a hand-over of change files would record its
// positions without its rows.
func TestFleetUpsertModeMismatch(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, false)
	up := handOverEvents(t, upsertMember(t, cat, ident, "u"), 0, 0, 1, orderEvent{"a", "created", time.Hour})
	h, err := sink.UnmarshalHandOver(up)
	if err != nil {
		t.Fatal(err)
	}
	appendCommitter := mustCommitter(t, cat, ident)
	if err := appendCommitter.Add(h); !errors.Is(err, sink.ErrBadHandOver) {
		t.Errorf("append committer took an upsert hand-over: %v, want ErrBadHandOver", err)
	}
	app := mustOpen(t, cat, ident, sink.WithHandOver("x"))
	rec := orderBatch([]orderEvent{{"b", "created", time.Hour}})
	defer rec.Release()
	if err := app.Write(context.Background(), fleetSP(1), []int64{0}, rec); err != nil {
		t.Fatal(err)
	}
	ah, err := app.HandOver(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := upsertCommitter(t, cat, ident).Add(ah); !errors.Is(err, sink.ErrBadHandOver) {
		t.Errorf("upsert committer took an append hand-over: %v, want ErrBadHandOver", err)
	}
}

// A hand-over the fence drops (its member lost its partitions in a
// rebalance) never lands, and its change file is removed at the
// committer's next round.
func TestFleetUpsertFencedChangeFileRemoved(t *testing.T) {
	t.Parallel()
	cat, dir := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, true)
	c := upsertCommitter(t, cat, ident)
	receive(t, c, handOverEvents(t, upsertMember(t, cat, ident, "a"), 0, 0, 1, orderEvent{"a", "created", time.Hour}))
	c.Fence(2)
	if n := len(changeFiles(t, dir)); n != 1 {
		t.Fatalf("%d change files before the round, want the fenced hand-over's", n)
	}
	mustLand(t, c, 0)
	if left := changeFiles(t, dir); len(left) > 0 {
		t.Errorf("change files left after the round: %v", left)
	}
	if got := states(t, cat, ident); len(got) != 0 {
		t.Errorf("table = %v, want empty: the fenced hand-over must not land", got)
	}
}
