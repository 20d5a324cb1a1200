package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// TestMergeOnReadV2KeepsOnePositionDeleteFilePerDataFile: on v2 every
// upsert that hits a data file again writes it one file-scoped position
// delete file holding the old positions too and removes the old one, so
// a reader applies one delete file per data file however many upserts
// ran (as with deletion vectors on v3), and the rows are those of
// copy-on-write.
func TestMergeOnReadV2KeepsOnePositionDeleteFilePerDataFile(t *testing.T) {
	t.Parallel()
	cat, ident := morTable(t, "2")
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 100)
	batches := [][]orderdata.Order{changedOrders(90, 150, 1_000_000)} // a second data file
	upsert(t, w, batches[0])
	for i := range 5 {
		b := changedOrders(i*7, 110+i*7, int64(2_000_000*(i+1))) // rows of both data files
		batches = append(batches, b)
		upsert(t, w, b)
		sum := summary(t, cat, ident)
		if i > 0 { // hits data files whose deletes an earlier upsert wrote
			assert.NotContains(t, []string{"", "0"}, sum.Properties["removed-position-delete-files"], "upsert %d: summary removed-position-delete-files", i+2)
		}
		for _, task := range liveTasks(t, cat, ident) {
			assert.LessOrEqual(t, len(task.DeleteFiles), 1, "upsert %d: position delete files of %s", i+2, task.File.FilePath())
		}
	}
	assert.Equal(t, cowResult(t, "2", 100, batches...), string(catalogtest.CanonicalScan(t, cat, ident)),
		"merge-on-read v2 table after upserts, want the copy-on-write content")
}

// TestMergeOnReadV2LeavesOtherWritersDeletes: a position delete file
// that deletes rows of several data files (iceberg-go's own delete, as
// other engines write them) is not file-scoped: an upsert that hits
// those data files leaves it live and does not repeat its positions; the
// rows are those of the same changes made copy-on-write.
func TestMergeOnReadV2LeavesOtherWritersDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first := changedOrders(90, 150, 1_000_000) // a second data file: orders 100..149
	gone := []int64{orderdata.Day(day0, 150)[3].ID, orderdata.Day(day0, 150)[120].ID}
	second := changedOrders(0, 140, 3_000_000) // hits both data files and the deleted orders' keys
	run := func(cat catalog.Catalog, ident icetable.Identifier, mode string) commit.Result {
		w := open(t, cat, ident)
		replaceDay(t, w, day0, 100)
		upsert(t, w, first)
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		txn := tbl.NewTransaction()
		require.NoError(t, txn.SetProperties(iceberg.Properties{icetable.WriteDeleteModeKey: mode}))
		tbl, err = txn.Commit(ctx)
		require.NoError(t, err)
		txn = tbl.NewTransaction()
		require.NoError(t, txn.Delete(ctx, iceberg.IsIn(iceberg.Reference("order_id"), gone...), nil))
		_, err = txn.Commit(ctx)
		require.NoError(t, err)
		return upsert(t, w, second)
	}
	refCat, _ := catalogtest.New(t)
	refIdent := catalogtest.CreateTable(t, refCat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "2"})
	run(refCat, refIdent, icetable.WriteModeCopyOnWrite)

	cat, ident := morTable(t, "2")
	res := run(cat, ident, icetable.WriteModeMergeOnRead)
	assert.Equal(t, int64(138), res.DeletedRows, "rows the upsert deleted: the live ones of its 140 keys")
	assert.Equal(t, string(catalogtest.CanonicalScan(t, refCat, refIdent)), string(catalogtest.CanonicalScan(t, cat, ident)),
		"merge-on-read v2 table, want the rows of the same changes copy-on-write")
	var shared string
	for _, task := range liveTasks(t, cat, ident) {
		for _, d := range task.DeleteFiles {
			const filePathID = 2147483546 // a position delete file's file_path column
			if string(d.LowerBoundValues()[filePathID]) != string(d.UpperBoundValues()[filePathID]) {
				shared = d.FilePath()
			}
		}
	}
	require.NotEmpty(t, shared, "iceberg-go's merge-on-read delete of rows of two data files: want a position delete file of both, live after the upsert")
}
