package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// morFormats are the format versions merge-on-read writes delete files
// for: position delete files on 2, deletion vectors on 3.
var morFormats = []string{"2", "3"}

// morTable creates db.fact_orders asking for merge-on-read upserts.
func morTable(t *testing.T, format string) (catalog.Catalog, icetable.Identifier) {
	t.Helper()
	cat, ident, _ := morTableDir(t, format)
	return cat, ident
}

// morTableDir is morTable, with the warehouse folder.
func morTableDir(t *testing.T, format string) (catalog.Catalog, icetable.Identifier, string) {
	t.Helper()
	cat, dir := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec,
		iceberg.Properties{"format-version": format, table.PropertyUpsertMode: table.ModeMergeOnRead})
	return cat, ident, dir
}

// cowResult is the content of a copy-on-write table after the same
// replace and upserts: what a merge-on-read table must read back as.
func cowResult(t *testing.T, format string, n int, batches ...[]orderdata.Order) string {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": format})
	w := open(t, cat, ident)
	replaceDay(t, w, day0, n)
	for _, b := range batches {
		upsert(t, w, b)
	}
	return string(catalogtest.CanonicalScan(t, cat, ident))
}

// changedOrders are orders from..to of day0, with a new amount.
func changedOrders(from, to int, amount int64) []orderdata.Order {
	out := orderdata.Day(day0, to)[from:]
	for i := range out {
		out[i].Amount = amount + int64(i)
	}
	return out
}

// liveTasks plans the table's current snapshot.
func liveTasks(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []icetable.FileScanTask {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	return tasks
}

func summary(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *icetable.Summary {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	return tbl.CurrentSnapshot().Summary
}

func TestMergeOnReadUpsertReadsBackAsCopyOnWrite(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			before := liveTasks(t, cat, ident)
			first := changedOrders(50, 150, 1_000_000)
			res := upsert(t, w, first)
			assert.Equal(t, int64(100), res.AddedRows, "Upsert(50 changed + 50 new).AddedRows")
			assert.Equal(t, int64(50), res.DeletedRows, "Upsert(50 changed + 50 new).DeletedRows")

			sum := summary(t, cat, ident)
			assert.Equal(t, icetable.OpOverwrite, sum.Operation, "operation of the upsert's snapshot")
			deletes := "added-position-delete-files"
			if format == "3" {
				deletes = "added-dvs"
			}
			assert.Equal(t, "1", sum.Properties[deletes], "summary %s", deletes)
			assert.Equal(t, "50", sum.Properties["added-position-deletes"], "summary added-position-deletes")
			assert.Equal(t, "100", sum.Properties["added-records"], "summary added-records")
			after := liveTasks(t, cat, ident)
			assert.Contains(t, paths(after), before[0].File.FilePath(), "the old data file must stay")

			// A second upsert hits the same data file again: on v3 its
			// vector is merged into one, never two.
			second := changedOrders(20, 60, 2_000_000)
			upsert(t, w, second)
			if format == "3" {
				assert.Equal(t, "1", summary(t, cat, ident).Properties["removed-dvs"], "summary removed-dvs of an upsert that supersedes a vector")
			}
			for _, task := range liveTasks(t, cat, ident) {
				assert.LessOrEqual(t, len(task.DeletionVectorFiles), 1, "deletion vectors of %s", task.File.FilePath())
			}
			assert.Equal(t, cowResult(t, format, 100, first, second), string(catalogtest.CanonicalScan(t, cat, ident)),
				"merge-on-read table after two upserts, read with deletes applied, want the copy-on-write content")
		})
	}
}

func paths(tasks []icetable.FileScanTask) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.File.FilePath()
	}
	return out
}

func TestMergeOnReadUpsertRerunMakesNoSnapshot(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			batch := changedOrders(50, 150, 1_000_000)
			upsert(t, w, batch)
			once := catalogtest.CanonicalScan(t, cat, ident)
			snaps := catalogtest.Snapshots(t, cat, ident)

			res := upsert(t, w, twice(batch))
			assert.True(t, res.Unchanged, "Upsert(same batch again).Unchanged = false, want true")
			assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "a rerun must not make a snapshot")
			assert.Equal(t, string(once), string(catalogtest.CanonicalScan(t, cat, ident)), "table after the rerun")

			// Another code version reruns it: the same rows, in a new snapshot.
			res = upsert(t, open(t, cat, ident, table.WithCodeVersion("v2")), batch)
			assert.False(t, res.Unchanged, "Upsert(same batch, new code version).Unchanged")
			assert.Equal(t, string(once), string(catalogtest.CanonicalScan(t, cat, ident)), "table after a rerun by another code version")
		})
	}
}

func TestMergeOnReadOption(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "2"})
	w := open(t, cat, ident, table.WithWriteMode(table.MergeOnRead))
	replaceDay(t, w, day0, 10)
	upsert(t, w, changedOrders(5, 10, 7))
	assert.Equal(t, "1", summary(t, cat, ident).Properties["added-position-delete-files"], "WithWriteMode(MergeOnRead) on a copy-on-write table")

	cat2, ident2 := morTable(t, "2")
	w2 := open(t, cat2, ident2, table.WithWriteMode(table.CopyOnWrite))
	replaceDay(t, w2, day0, 10)
	upsert(t, w2, changedOrders(5, 10, 7))
	assert.Empty(t, summary(t, cat2, ident2).Properties["added-position-delete-files"], "WithWriteMode(CopyOnWrite) on a merge-on-read table")

	_, err := table.Open(context.Background(), cat, ident, table.WithWriteMode(table.WriteMode(9)))
	assert.ErrorIs(t, err, table.ErrBadOption, "WithWriteMode(9)")
}
