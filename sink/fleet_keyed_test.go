package sink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// keyedOpts are the keyed mode of the keyed fleet tests.
var keyedOpts = []sink.Option{sink.WithoutSnapshotExpiry(), sink.WithKey("id", "event_time")}

func keyedCommitter(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *sink.Committer {
	t.Helper()
	c, err := sink.OpenCommitter(context.Background(), cat, ident, keyedOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// keyedHandOver writes ms to keyed member m as the messages at offsets
// from, from+1, ... of partition p and hands them over at generation 1,
// through the wire form.
func keyedHandOver(t *testing.T, m *sink.Sink, p int32, from int64, ms ...msg) []byte {
	t.Helper()
	rec := batch(ms)
	defer rec.Release()
	return handOverRows(t, m, p, from, 1, sink.ModeKeyed, rec)
}

// Keyed members of a fleet hand their rows over; the committer keeps the
// first row of each key among the table and the round's hand-overs, in
// one snapshot per interval: a key twice in a member's batch, in two
// members' batches, or already in the table lands once. A hand-over
// delivered twice and a zombie committer land nothing twice, and a key
// another writer commits between the committer's plan and its commit is
// read again (the round planned again), not committed twice.
func TestFleetKeyed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	c, zombie := keyedCommitter(t, cat, ident), keyedCommitter(t, cat, ident)
	member := func(id string) *sink.Sink {
		return mustOpen(t, cat, ident, append([]sink.Option{sink.WithHandOver(id)}, keyedOpts...)...)
	}
	a, b := member("a"), member("b")

	ha := keyedHandOver(t, a, 0, 0, msg{"x", 0, day0}, msg{"y", 1, day0}, msg{"x", 2, day0})
	hb := keyedHandOver(t, b, 1, 0, msg{"y", 10, day0}, msg{"z", 11, day0})
	receive(t, c, ha, hb, ha)
	receive(t, zombie, ha, hb)
	mustLand(t, c, 2)
	if l := mustLand(t, zombie, 0); len(l.Dropped) != 2 {
		t.Errorf("zombie dropped %d hand-overs, want the 2 landed", len(l.Dropped))
	}

	// Interval 2: z is in the table; v is committed by a lone keyed sink
	// of another source between the committer's plan and its commit.
	receive(t, c,
		keyedHandOver(t, a, 0, 3, msg{"z", 3, day0}, msg{"w", 4, day0}, msg{"v", 5, day0}),
		keyedHandOver(t, b, 1, 2, msg{"w", 12, day0}))
	other := mustOpen(t, cat, ident, keyedOpts...)
	once := false
	c.SetBeforeCommit(func() {
		if once {
			return
		}
		once = true
		rec := batch([]msg{{"v", 99, day0}})
		defer rec.Release()
		if err := other.Write(ctx, sink.SourcePartition{Source: "test:other", Partition: 0}, []int64{0}, rec); err != nil {
			t.Error(err)
		}
		mustCommit(t, other)
	})
	mustLand(t, c, 2)

	if got, w := ids(t, cat, ident), []string{"v", "w", "x", "y", "z"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v, each once", got, w)
	}
	st := c.Stats()
	if st.DuplicateKeys != 5 || st.Replans != 1 || st.Commits != 2 {
		t.Errorf("committer stats = %+v, want 5 duplicate keys (x, y, z, w, v), 1 replan, 2 commits", st)
	}
	if got := positionsOf(t, cat, ident); got != [2]int64{5, 2} {
		t.Errorf("positions = %v, want [5 2]", got)
	}
	if left := changeFiles(t, dir); len(left) > 0 {
		t.Errorf("change files left: %v", left)
	}
}
