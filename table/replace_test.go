package table_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

func TestReplacePartitionRerunIsUnchanged(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	first := replaceDay(t, w, day0, 500)
	assert.False(t, first.Unchanged)
	assert.Equal(t, int64(500), first.AddedRows)
	assert.Equal(t, 1, first.Attempts)
	assert.Equal(t, []string{"event_date=2026-07-14"}, first.Partitions)
	scan1 := catalogtest.CanonicalScan(t, cat, ident)
	files1 := catalogtest.DataFiles(t, dir)

	second := replaceDay(t, w, day0, 500)
	assert.True(t, second.Unchanged, "rerun of the same input: Unchanged = false, want true")
	assert.Equal(t, first.SnapshotID, second.SnapshotID)
	assert.Equal(t, scan1, catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, files1, catalogtest.DataFiles(t, dir), "an unchanged rerun must remove the files it wrote")
	assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
}

func TestReplacePartitionReplacesOnlyItsPartition(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 300)
	replaceDay(t, w, day0.AddDate(0, 0, 1), 200)
	before := catalogtest.CanonicalScan(t, cat, ident)

	res := replaceDay(t, w, day0, 100) // new content for the 14th
	assert.Equal(t, int64(300), res.DeletedRows)
	assert.Equal(t, int64(100), res.AddedRows)
	after := catalogtest.CanonicalScan(t, cat, ident)
	assert.Equal(t, 300, strings.Count(string(after), "\n"))
	assert.NotEqual(t, before, after)

	// A rerun with the original content restores the original table.
	replaceDay(t, w, day0, 300)
	assert.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
}

func TestReplacePartitionNewCodeVersionCommits(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	replaceDay(t, open(t, cat, ident, table.WithCodeVersion("v1")), day0, 10)
	res := replaceDay(t, open(t, cat, ident, table.WithCodeVersion("v2")), day0, 10)
	assert.False(t, res.Unchanged, "same rows from another code version must be recorded")
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	props := tbl.CurrentSnapshot().Summary.Properties
	assert.Equal(t, "v2", props[commit.SummaryCodeVersion])
	assert.Equal(t, "event_date=2026-07-14", props[commit.SummaryPartitions])
	assert.Equal(t, "10", props[commit.SummaryRows])
	for _, k := range []string{commit.SummaryRunID, commit.SummaryInputFingerprint, commit.SummarySchemaID, commit.SummaryCommitToken} {
		assert.NotEmpty(t, props[k], "summary property %s", k)
	}
}

func TestReplacePartitionEmptyInputEmptiesPartition(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 50)
	replaceDay(t, w, day0.AddDate(0, 0, 1), 20)
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(nil))
	require.NoError(t, err)
	assert.Equal(t, int64(50), res.DeletedRows)
	assert.Equal(t, 20, strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n"))
	_ = orderdata.Schema
}

// A table whose own iceberg-go retries are on works like any other: icerun
// commits through the catalog itself, so iceberg-go's replay of a stale
// delete list never runs.
func TestReplacePartitionIgnoresIcebergRetries(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"commit.retry.num-retries": "3"})
	w := open(t, cat, ident)
	for _, n := range []int{3, 2} {
		_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, n)))
		require.NoError(t, err)
	}
	assert.Equal(t, 2, strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n"))
}
