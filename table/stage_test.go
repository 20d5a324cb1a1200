package table

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
)

// stagerTable creates an orders table and returns it with its spec.
func stagerTable(t *testing.T) (*icetable.Table, *partition.Spec) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	w, err := Open(context.Background(), cat, ident)
	require.NoError(t, err)
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	return tbl, spec
}

// Parallel writers split a partition into one file each, the second kept
// half a split behind the first so that their row groups flush in turn;
// every row is written once.
func TestStagerStaggersWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, spec := stagerTable(t)
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

// A dynamic write routes each partition's rows to writers of its own
// (keyed, so iceberg-go does not partition them again) and ends a
// partition's writers once the input has moved on by splitRows rows
// without it: sorted input keeps one partition's file open at a time,
// where iceberg-go's partitioned writer kept every file open to the end.
// Interleaved rows are split by key; every file holds its partition's
// rows and values.
func TestStagerRoutesKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, spec := stagerTable(t)
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	dayKey := func(d int) partition.Key {
		k, err := spec.Parse("event_date=" + day.AddDate(0, 0, d).Format(time.DateOnly))
		require.NoError(t, err)
		return k
	}
	for _, tc := range []struct {
		name        string
		interleaved bool
		recurring   bool
	}{{"sorted", false, false}, {"interleaved", true, false}, {"recurring", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaults()
			cfg.maxWriters, cfg.splitRows = 1, 1000
			// The input as a replacement resolves it (with field ids).
			sc, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
			require.NoError(t, err)
			st := newStager(ctx, tbl, sc, cfg)
			var orders []orderdata.Order
			for d := range 4 {
				orders = append(orders, orderdata.Day(day.AddDate(0, 0, d), 3000)...)
			}
			if tc.recurring { // runs of 1,000 rows of each day in turn
				mixed := make([]orderdata.Order, 0, len(orders))
				for third := range 3 {
					for d := range 4 {
						mixed = append(mixed, orders[d*3000+third*1000:d*3000+third*1000+1000]...)
					}
				}
				orders = mixed
			}
			if tc.interleaved { // rows of the 4 days in turn
				mixed := make([]orderdata.Order, 0, len(orders))
				for i := range 3000 {
					for d := range 4 {
						mixed = append(mixed, orders[d*3000+i])
					}
				}
				orders = mixed
			}
			rdr := orderdata.Reader(orders, 500)
			defer rdr.Release()
			for rdr.Next() {
				rec := rdr.RecordBatch()
				require.NoError(t, st.add(array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())))
				if !tc.interleaved && !tc.recurring && st.rows >= 4000+500 {
					// Day 0 ended 1,000 rows (splitRows) ago.
					assert.Empty(t, st.byKey[dayKey(0)].streams, "day 0's writer still running")
				}
			}
			files, err := st.finish()
			require.NoError(t, err)
			perKey := map[partition.Key]int64{}
			for _, f := range files {
				k, err := spec.KeyFromValues(f.Partition())
				require.NoError(t, err)
				perKey[k] += f.Count()
				// Every row of the file is in its partition.
				_, batches, err := tbl.Scan().ReadTasks(ctx, []icetable.FileScanTask{{File: f, Length: f.FileSizeBytes()}})
				require.NoError(t, err)
				var n int64
				for rec, err := range batches {
					require.NoError(t, err)
					dates := rec.Column(rec.Schema().FieldIndices("event_date")[0]).(*array.Date32)
					for i := range dates.Len() {
						got := "event_date=" + dates.Value(i).ToTime().Format(time.DateOnly)
						require.Equal(t, k.String(), got, "row %d of file %s", i, f.FilePath())
					}
					n += rec.NumRows()
					rec.Release()
				}
				assert.Equal(t, f.Count(), n)
			}
			require.Len(t, perKey, 4)
			for d := range 4 {
				assert.Equal(t, int64(3000), perKey[dayKey(d)], "day %d", d)
			}
			switch {
			case tc.recurring:
				// Each day's writer ends after its first run; its second
				// run, 3,000 rows later, gets a writer that runs to the
				// end and takes the third run too.
				assert.Len(t, files, 8, "two files per day")
			case !tc.interleaved:
				assert.Len(t, files, 4, "one file per day")
			}
			require.NoError(t, st.remove(files))
		})
	}
}

// Input sorted by partition with many small partitions does not keep every
// partition's writers running: past maxOpenGroups, a partition without a
// row in the latest batch is ended.
func TestStagerBoundsOpenPartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, _ := stagerTable(t)
	sc, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	require.NoError(t, err)
	cfg := defaults()
	cfg.maxWriters = 1 // splitRows stays large: idleness alone would end nothing
	st := newStager(ctx, tbl, sc, cfg)
	const days, perDay, batch = 3 * maxOpenGroups, 10, 200 // 20 partitions a batch
	var orders []orderdata.Order
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	for d := range days {
		orders = append(orders, orderdata.Day(day.AddDate(0, 0, -d), perDay)...)
	}
	rdr := orderdata.Reader(orders, batch)
	defer rdr.Release()
	most := 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		require.NoError(t, st.add(array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())))
		open := 0
		for _, g := range st.byKey {
			if len(g.streams) > 0 {
				open++
			}
		}
		most = max(most, open)
	}
	files, err := st.finish()
	require.NoError(t, err)
	assert.LessOrEqual(t, most, maxOpenGroups+batch/perDay, "partitions with running writers")
	assert.Len(t, files, days, "one file per partition")
	require.NoError(t, st.remove(files))
}
