package sink_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// countingCatalog counts the table loads a caller asks of the catalog.
type countingCatalog struct {
	catalog.Catalog
	loads atomic.Int64
}

func (c *countingCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	c.loads.Add(1)
	return c.Catalog.LoadTable(ctx, ident)
}

// TestLoneSinkPlansOnItsLastCommit: a sink that is the table's only
// writer plans each commit on the state its last commit left, without a
// load of the table first (a load is a catalog round trip and a parse
// of the metadata file, whose size grows with the retained snapshots).
// When another writer commits in between, the commit planned on the old
// state loses, is planned again on a fresh load, and both writers' rows
// end in the table once; the next commit loads first again.
func TestLoneSinkPlansOnItsLastCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base, dir := catalogtest.New(t)
	ident := eventsTable(t, base, "events")
	cat := &countingCatalog{Catalog: base}
	s := mustOpen(t, cat, ident, sink.WithoutSnapshotExpiry())
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s) // loads first: the state Open read may be old
	before := cat.loads.Load()
	for c := int64(1); c <= 5; c++ {
		mustWrite(t, s, sp0, c*10, c*10+10)
		res, err := s.Commit(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Attempts != 1 {
			t.Errorf("commit %d of a lone sink took %d attempts, want 1", c, res.Attempts)
		}
	}
	if n := cat.loads.Load() - before; n != 0 {
		t.Errorf("a lone sink loaded the table %d times in 5 commits, want 0", n)
	}

	// Another writer commits in between.
	sp1 := sink.SourcePartition{Source: "test:events", Partition: 1}
	other, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithoutSnapshotExpiry())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, other, sp1, 0, 10)
	mustCommit(t, other)

	mustWrite(t, s, sp0, 60, 70)
	res, err := s.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Attempts != 2 {
		t.Errorf("commit planned on a state another writer moved past took %d attempts, want 2 (lost, then planned on a fresh load)", res.Attempts)
	}
	before = cat.loads.Load()
	mustWrite(t, s, sp0, 70, 80)
	mustCommit(t, s)
	if n := cat.loads.Load() - before; n != 1 {
		t.Errorf("the commit after a lost plan loaded the table %d times, want 1", n)
	}
	w := append(want(0, 0, 80), want(1, 0, 10)...)
	slices.Sort(w)
	if got := ids(t, base, ident); !slices.Equal(got, w) {
		t.Errorf("table holds %d rows, want the %d both writers committed, once each", len(got), len(w))
	}
	tbl, err := base.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if pos[sp0] != 79 || pos[sp1] != 9 {
		t.Errorf("positions %v, want %s at 79 and %s at 9", pos, sp0, sp1)
	}
}
