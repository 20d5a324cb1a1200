package table

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
)

// Parallel writers split a partition into one file each, the second kept
// half a split behind the first so that their row groups flush in turn;
// every row is written once.
func TestStagerStaggersWriters(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	w, err := Open(ctx, cat, ident)
	require.NoError(t, err)
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	k, err := spec.Parse("event_date=2026-07-14")
	require.NoError(t, err)

	cfg := defaults()
	cfg.maxWriters, cfg.splitRows = 2, 1000
	rdr := orderdata.Stream(day, 10_000, 100)
	defer rdr.Release()
	st := newStager(ctx, tbl, rdr.Schema(), cfg)
	require.NoError(t, st.writeOnly(spec, k))
	for rdr.Next() {
		rec := rdr.RecordBatch()
		rec.Retain()
		require.NoError(t, st.add(rec))
	}
	files, err := st.finish()
	require.NoError(t, err)
	require.Len(t, files, 2)
	counts := []int64{files[0].Count(), files[1].Count()}
	slices.Sort(counts)
	assert.Equal(t, int64(10_000), counts[0]+counts[1])
	// The lag is 500 rows (half of splitRows, smaller than a row group),
	// give or take a batch.
	assert.InDelta(t, 500, counts[1]-counts[0], 100, "rows per file %v", counts)
	for _, f := range files {
		got, err := spec.KeyFromValues(f.Partition())
		require.NoError(t, err)
		assert.Equal(t, k, got)
		assert.Equal(t, iceberg.EntryContentData, f.ContentType())
	}
	require.NoError(t, st.remove(files))
}
