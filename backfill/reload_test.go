package backfill_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// prunedWhileLoading is a real catalog whose armed LoadTable reads the
// table's pointer, lets between run (another writer's commits, which prune
// the metadata file the pointer names), and only then reads that file: the
// race of a load with a busy table's metadata pruning, made certain.
type prunedWhileLoading struct {
	catalog.Catalog
	armed   atomic.Bool
	between func(ctx context.Context)
}

func (c *prunedWhileLoading) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil || !c.armed.CompareAndSwap(true, false) {
		return tbl, err
	}
	c.between(ctx)
	return icetable.NewFromLocation(ctx, ident, tbl.MetadataLocation(), tbl.FS, c)
}

// TestLoadRacesMetadataPruning: another worker's commits prune (Hygiene.
// PreviousVersionsMax) the metadata.json that Run's first load was pointed
// at before it is read. Run loads the table again instead of failing.
func TestLoadRacesMetadataPruning(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	h := backfill.Hygiene{PreviousVersionsMax: 1}
	other, err := table.Open(ctx, catalogtest.Open(t, dir), ident)
	require.NoError(t, err)
	ks := keys(t, other, 4)
	_, err = backfill.Run(ctx, other, ks[:1], orders, backfill.WithHygiene(h))
	require.NoError(t, err)

	racing := &prunedWhileLoading{Catalog: catalogtest.Open(t, dir)}
	racing.between = func(ctx context.Context) {
		_, err := backfill.Run(ctx, other, ks[1:3], orders, backfill.WithHygiene(h)) // two commits: the oldest file goes
		require.NoError(t, err)
	}
	w, err := table.Open(ctx, racing, ident)
	require.NoError(t, err)
	racing.armed.Store(true)
	rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithHygiene(h))
	require.False(t, racing.armed.Load(), "the race happened")
	require.NoError(t, err)
	require.Equal(t, 3, rep.Skipped)
	require.Equal(t, 1, rep.Written)
}

// removedDuringWalk is the local file IO; its WalkDir removes the file
// named gone just before it reaches it, as another writer's cleanup of a
// lost commit attempt does while a walk is under way.
type removedDuringWalk struct {
	iceio.LocalFS
	gone string
}

func (r removedDuringWalk) WalkDir(root string, fn fs.WalkDirFunc) error {
	return r.LocalFS.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == r.gone {
			if rerr := os.Remove(p); rerr != nil {
				return rerr
			}
		}
		return fn(p, d, err)
	})
}

// TestMeasureRacesFileRemoval: a metadata file removed by another writer
// while Measure walks the metadata folder is not counted, and is no error
// (it failed a run of 4 writers on PostgreSQL at its end).
func TestMeasureRacesFileRemoval(t *testing.T) {
	ctx := context.Background()
	_, _, w, ks := setup(t)
	_, err := backfill.Run(ctx, w, ks[:2], orders)
	require.NoError(t, err)
	tbl := w.Table()
	before, err := backfill.Measure(ctx, tbl)
	require.NoError(t, err)

	dir := filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "metadata")
	gone := filepath.Join(dir, "snap-lost-attempt.avro")
	require.NoError(t, os.WriteFile(gone, []byte("a lost attempt's manifest list"), 0o644))
	racing := icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(),
		func(context.Context) (iceio.IO, error) { return removedDuringWalk{gone: gone}, nil }, nil)
	got, err := backfill.Measure(ctx, racing)
	require.NoError(t, err)
	require.NoFileExists(t, gone, "the walk met the removal")
	require.Equal(t, before, got)
}
