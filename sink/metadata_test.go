package sink_test

import (
	"context"
	"errors"
	"io/fs"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// metadataFiles is the number of metadata.json files of the table.
func metadataFiles(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	st, err := backfill.Measure(context.Background(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	return st.MetadataJSON
}

// TestSinkPrunesMetadataFiles: every commit writes a metadata.json; a
// sink that expires snapshots (the default) makes its commits delete the
// ones that fall out of the metadata log, so a long stream leaves a
// bounded number of them; a table that sets the log's length keeps it.
func TestSinkPrunesMetadataFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a long run of commits: not in -short")
	}
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	const commits = 60
	for c := range int64(commits) {
		mustWrite(t, s, sp0, c*10, c*10+10)
		mustCommit(t, s)
	}
	props := s.Table().Properties()
	if props[icetable.MetadataDeleteAfterCommitEnabledKey] != "true" || props[icetable.MetadataPreviousVersionsMaxKey] != "20" {
		t.Errorf("table properties %v, want metadata pruning keeping 20 previous versions", props)
	}
	// The log's 20 files and the current one; the expiry's own commits
	// prune too.
	if n := metadataFiles(t, cat, ident); n > 20+1 {
		t.Errorf("%d metadata.json files after %d commits, want the log's 20 and the current one", n, commits)
	}
	if got := len(tableRows(t, cat, ident)); got != commits*10 {
		t.Errorf("%d rows, want %d", got, commits*10)
	}

	// A table that sets its own log length keeps it, and its files.
	own := eventsTable(t, cat, "own")
	tbl, err := cat.LoadTable(ctx, own)
	if err != nil {
		t.Fatal(err)
	}
	txn := tbl.NewTransaction()
	if err := txn.SetProperties(iceberg.Properties{icetable.MetadataPreviousVersionsMaxKey: "50"}); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, cat, own)
	for c := range int64(30) {
		mustWrite(t, s2, sp0, c*10, c*10+10)
		mustCommit(t, s2)
	}
	props = s2.Table().Properties()
	if props[icetable.MetadataPreviousVersionsMaxKey] != "50" || props[icetable.MetadataDeleteAfterCommitEnabledKey] != "" {
		t.Errorf("a table's own metadata log setting was changed: %v", props)
	}
	if n := metadataFiles(t, cat, own); n < 30 {
		t.Errorf("%d metadata.json files of the table that prunes nothing, want every one of 30 commits", n)
	}
}

// prunedOnceCatalog fails its first LoadTable as the SQL catalog does when
// other writers' commits pruned the metadata file it had looked up before
// it could be read: first() commits them, and the load then reads the
// file it looked up first.
type prunedOnceCatalog struct {
	catalog.Catalog
	first func()
}

func (c *prunedOnceCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	f := c.first
	if f == nil {
		return c.Catalog.LoadTable(ctx, ident)
	}
	c.first = nil
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	f()
	return icetable.NewFromLocation(ctx, ident, tbl.MetadataLocation(), tbl.FS, c.Catalog)
}

// TestSinkLoadsTableWhileItsMetadataIsPruned: a sink opening (or
// re-planning a commit) while other sinks' commits prune the metadata file
// the catalog just named loads the table again instead of failing.
func TestSinkLoadsTableWhileItsMetadataIsPruned(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a long run of commits: not in -short")
	}
	ctx := context.Background()
	base, _ := catalogtest.New(t)
	ident := eventsTable(t, base, "events")
	other := mustOpen(t, base, ident)
	mustWrite(t, other, sp0, 0, 10)
	mustCommit(t, other) // sets the pruning properties
	var pruned string
	cat := &prunedOnceCatalog{Catalog: base, first: func() {
		tbl, _ := base.LoadTable(ctx, ident)
		pruned = tbl.MetadataLocation()
		for c := int64(1); c <= 25; c++ {
			mustWrite(t, other, sp0, c*10, c*10+10)
			mustCommit(t, other)
		}
	}}
	// The failure is real: the file the catalog named is gone.
	probe := &prunedOnceCatalog{Catalog: base, first: cat.first}
	cat.first = nil
	if _, err := probe.LoadTable(ctx, ident); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("loading %s after 25 commits: %v, want fs.ErrNotExist", pruned, err)
	}
	cat.first = func() {
		for c := int64(26); c <= 50; c++ {
			mustWrite(t, other, sp0, c*10, c*10+10)
			mustCommit(t, other)
		}
	}
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatalf("open while the metadata was pruned: %v", err)
	}
	got, err := s.Start(ctx, sp0)
	if err != nil {
		t.Fatal(err)
	}
	if got[sp0] != 509 {
		t.Errorf("start positions %v, want offset 509 of %v", got, sp0)
	}
}

// TestCommittedTableDoesNotHoldEarlierMetadata: a sink keeps the table
// its last commit returned, and plans the next commit on it. The metadata
// of earlier commits must not stay reachable from it: a sink committing
// every second for ten minutes without expiry held 868 MB, growing with
// the square of its commits, each table holding the one before through
// its file IO function.
func TestCommittedTableDoesNotHoldEarlierMetadata(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithoutSnapshotExpiry())
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	var gone atomic.Bool
	runtime.SetFinalizer(s.Table().Metadata(), func(any) { gone.Store(true) })
	for c := int64(1); c <= 3; c++ {
		mustWrite(t, s, sp0, c*10, c*10+10)
		mustCommit(t, s)
	}
	for i := 0; i < 50 && !gone.Load(); i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(s) // the sink, and the table it holds, stay
	if !gone.Load() {
		t.Error("the metadata of the sink's first commit is still reachable after three more commits")
	}
}
