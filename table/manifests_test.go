package table_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// fastAppends appends batches from..to-1 (small ones) with iceberg-go's own Append, one
// commit each, over several days: every commit adds a manifest of one
// file, as many small commits of other engines leave a table.
func fastAppends(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, from, to int) {
	t.Helper()
	ctx := context.Background()
	for i := from; i < to; i++ {
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		d := day0.AddDate(0, 0, i%5)
		orders := orderdata.Day(d, 3+i)[i:]
		rec := orderdata.Batch(orderdata.ArrowSchema(), orders)
		rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		require.NoError(t, err)
		txn := tbl.NewTransaction()
		require.NoError(t, txn.Append(ctx, rdr, nil))
		_, err = txn.Commit(ctx)
		require.NoError(t, err)
		rdr.Release()
		rec.Release()
	}
}

// manifestsOf lists the manifests of ident's current snapshot.
func manifestsOf(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []iceberg.ManifestFile {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	fs, err := tbl.FS(ctx)
	require.NoError(t, err)
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	require.NoError(t, err)
	return mfs
}

// dataFileRowIDs maps each live data file of ident to its first_row_id
// (format v3; nil below).
func dataFileRowIDs(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	out := map[string]int64{}
	for _, task := range tasks {
		id := int64(-1)
		if p := task.File.FirstRowID(); p != nil {
			id = *p
		}
		out[task.File.FilePath()] = id
	}
	return out
}

// RewriteManifests folds the many one-file manifests of iceberg-go's
// appends (and the delete manifests of merge-on-read deletes) into as few
// as their entries need, in one "replace" snapshot: the rows, the files and
// (v3) the row ids stay; a second call finds nothing to do and makes no
// snapshot.
func TestRewriteManifests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident, dir := morTableDir(t, format)
			fastAppends(t, cat, ident, 0, 1)
			w := open(t, cat, ident)
			upsert(t, w, changedOrders(0, 2, 777)) // merge-on-read: delete files too
			fastAppends(t, cat, ident, 1, 13)
			before := manifestsOf(t, cat, ident)
			require.Greater(t, len(before), 12)
			scan, snaps, ids := catalogtest.CanonicalScan(t, cat, ident), catalogtest.Snapshots(t, cat, ident), dataFileRowIDs(t, cat, ident)
			if format == "3" {
				for path, id := range ids {
					require.NotEqual(t, int64(-1), id, "v3 data file %s has a first row id", path)
				}
			}

			res, err := w.RewriteManifests(ctx)
			require.NoError(t, err)
			require.False(t, res.Unchanged)
			after := manifestsOf(t, cat, ident)
			require.Len(t, after, 2, "one data manifest and one delete manifest")
			require.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "the same rows")
			require.Equal(t, ids, dataFileRowIDs(t, cat, ident), "the same files, with the same first row ids")
			require.Equal(t, snaps+1, catalogtest.Snapshots(t, cat, ident))
			tbl, err := cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			sum := tbl.CurrentSnapshot().Summary
			require.Equal(t, icetable.OpReplace, sum.Operation)
			require.Equal(t, "2", sum.Properties["manifests-created"])
			require.Equal(t, "0", sum.Properties["changed-partition-count"])

			res, err = w.RewriteManifests(ctx)
			require.NoError(t, err)
			require.True(t, res.Unchanged, "nothing left to rewrite")
			require.Equal(t, snaps+1, catalogtest.Snapshots(t, cat, ident))
			require.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir))
		})
	}
}

// A commit that lands between the rewrite's planning and its commit is
// not lost: the rewrite is planned again on the new state, and the new
// rows are in the rewritten manifests.
func TestRewriteManifestsReplansOnConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := morTableDir(t, "2")
	fastAppends(t, cat, ident, 0, 10)
	race := &catalogtest.Interposer{Catalog: cat}
	w := open(t, race, ident)
	race.Before = func() { replaceDay(t, open(t, cat, ident), day0.AddDate(0, 0, 9), 7) }
	res, err := w.RewriteManifests(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, res.Attempts, "lost the race once, then committed")
	require.Len(t, manifestsOf(t, cat, ident), 1)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	n := 0
	tasks, err := tbl.Scan(icetable.WithRowFilter(iceberg.EqualTo(iceberg.Reference("event_date"), day0.AddDate(0, 0, 9).Format(time.DateOnly)))).PlanFiles(ctx)
	require.NoError(t, err)
	for _, task := range tasks {
		n += int(task.File.Count())
	}
	require.Equal(t, 7, n, "the racing replace's rows")
}

// A branch writer's rewrite is refused: it rewrites main's manifests.
func TestRewriteManifestsOnBranch(t *testing.T) {
	t.Parallel()
	cat, ident, _ := morTableDir(t, "2")
	w := open(t, cat, ident, table.WithBranch("audit"))
	_, err := w.RewriteManifests(context.Background())
	require.True(t, errors.Is(err, commit.ErrUnsupported), "%v", err)
}
