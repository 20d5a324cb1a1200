package table_test

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// liveFiles are the data files of tbl's current snapshot.
func liveFiles(t *testing.T, tbl *icetable.Table) []iceberg.DataFile {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	out := make([]iceberg.DataFile, len(tasks))
	for i, task := range tasks {
		out[i] = task.File
	}
	return out
}

// fileRows reads the rows of data file f, in file order.
func fileRows(t *testing.T, tbl *icetable.Table, f iceberg.DataFile) []arrow.RecordBatch {
	t.Helper()
	_, batches, err := tbl.Scan().ReadTasks(context.Background(), []icetable.FileScanTask{{File: f, Length: f.FileSizeBytes()}})
	require.NoError(t, err)
	var out []arrow.RecordBatch
	for rec, err := range batches {
		require.NoError(t, err)
		out = append(out, rec)
	}
	return out
}

// TestTargetFileSize: write.target-file-size-bytes splits a partition's
// files at the target, as Java writers do; before, the row group (128 MiB
// or 1M rows) decided and one file held the whole partition.
func TestTargetFileSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		target int64
		rows   int
	}{
		{"256KiB", 256 << 10, 300_000},
		{"1MiB", 1 << 20, 300_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "sized", orderdata.Schema, orderdata.Spec,
				iceberg.Properties{icetable.WriteTargetFileSizeBytesKey: strconv.FormatInt(tc.target, 10)})
			w := open(t, cat, ident, table.WithParallelWrite(1, 1<<30))
			res := replaceDay(t, w, day0, tc.rows)
			tbl := w.Table()
			files := liveFiles(t, tbl)
			var rows, bytes int64
			for _, f := range files {
				rows += f.Count()
				bytes += f.FileSizeBytes()
				assert.LessOrEqual(t, f.FileSizeBytes(), tc.target*5/4, "file %s: %d bytes, target %d", f.FilePath(), f.FileSizeBytes(), tc.target)
			}
			assert.EqualValues(t, tc.rows, rows)
			assert.Equal(t, res.AddedFiles, len(files))
			assert.GreaterOrEqual(t, int64(len(files)), bytes/(tc.target*5/4), "files: %d for %d bytes", len(files), bytes)
			t.Logf("target %d: %d files, %d bytes", tc.target, len(files), bytes)
		})
	}
}

// sortedTable creates db.name with a sort order of fields (none: unsorted).
func sortedTable(t *testing.T, name string, fields ...icetable.SortField) (catalog.Catalog, icetable.Identifier, string) {
	t.Helper()
	cat, dir := catalogtest.New(t)
	ident := icetable.Identifier{catalogtest.Namespace, name}
	spec := orderdata.Spec
	opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}
	if len(fields) > 0 {
		order, err := icetable.NewSortOrder(1, fields)
		require.NoError(t, err)
		opts = append(opts, catalog.WithSortOrder(order))
	}
	_, err := cat.CreateTable(context.Background(), ident, orderdata.Schema, opts...)
	require.NoError(t, err)
	return cat, ident, dir
}

// TestSortOrderHonored: with a table sort order (currency desc, then
// customer_id asc), every data file's rows are in that order and the file
// says so (sort_order_id 1), with the input shuffled, spilled in runs
// (5,000-row runs of 30,000 rows) and written by two encoders, on the
// static and the dynamic path. Unsorted tables and orders icerun does not
// sort by (a bucket transform) give files without a claim.
func TestSortOrderHonored(t *testing.T) {
	t.Parallel()
	currencyDesc := icetable.SortField{SourceIDs: []int{4}, Transform: iceberg.IdentityTransform{}, Direction: icetable.SortDESC, NullOrder: icetable.NullsLast}
	customerAsc := icetable.SortField{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}
	bucket := icetable.SortField{SourceIDs: []int{2}, Transform: iceberg.BucketTransform{NumBuckets: 4}, Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}
	for _, tc := range []struct {
		name    string
		fields  []icetable.SortField
		dynamic bool
		claim   bool
	}{
		{"sorted static", []icetable.SortField{currencyDesc, customerAsc}, false, true},
		{"sorted dynamic", []icetable.SortField{currencyDesc, customerAsc}, true, true},
		{"unsorted table", nil, false, false},
		{"unsupported transform", []icetable.SortField{bucket}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, ident, dir := sortedTable(t, "sorted", tc.fields...)
			w := open(t, cat, ident, table.WithParallelWrite(2, 5000))
			const n = 30_000
			orders := orderdata.Day(day0, n)
			if tc.dynamic {
				orders = append(orders, orderdata.Day(day0.AddDate(0, 0, 1), n/3)...)
			}
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(orders), func(i, j int) { orders[i], orders[j] = orders[j], orders[i] })
			rows := orderdata.Reader(orders, 1000)
			defer rows.Release()
			var err error
			if tc.dynamic {
				_, err = w.ReplacePartitions(context.Background(), rows)
			} else {
				_, err = w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
			}
			require.NoError(t, err)
			tbl := w.Table()
			files := liveFiles(t, tbl)
			if tc.claim {
				assert.Greater(t, len(files), 1+boolCount(tc.dynamic), "two encoders write several files")
			}
			ids := map[int64]bool{}
			for _, f := range files {
				if !tc.claim {
					assert.Nil(t, f.SortOrderID(), "file %s claims a sort order", f.FilePath())
					continue
				}
				require.NotNil(t, f.SortOrderID(), "file %s makes no sort claim", f.FilePath())
				assert.Equal(t, 1, *f.SortOrderID())
				var prevCur string
				var prevCust int64
				first := true
				for _, rec := range fileRows(t, tbl, f) {
					id := rec.Column(0).(*array.Int64)
					cust := rec.Column(1).(*array.Int64)
					cur := rec.Column(3).(*array.String)
					for i := range int(rec.NumRows()) {
						ids[id.Value(i)] = true
						c, k := cur.Value(i), cust.Value(i)
						if !first && (c > prevCur || c == prevCur && k < prevCust) {
							t.Fatalf("file %s: row (%s, %d) after (%s, %d): not in sort order", f.FilePath(), c, k, prevCur, prevCust)
						}
						prevCur, prevCust, first = c, k, false
					}
					rec.Release()
				}
			}
			if tc.claim {
				assert.Len(t, ids, len(orders), "every row written once")
			}
			var onDisk, runs int
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".parquet") {
					onDisk++
				}
				if err == nil && strings.HasSuffix(p, ".arrow") {
					runs++
				}
				return err
			}))
			assert.Equal(t, len(files), onDisk, "Parquet files on disk = data files of the table")
			assert.Zero(t, runs, "spilled sort runs left on disk")
		})
	}
}

func boolCount(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCompressionLevel: a table that sets no write.parquet.compression-level
// gets zstd level 1 (table.DefaultZstdLevel, PyIceberg's), the same bytes
// as a table that sets 1; a level the table sets is honored.
func TestCompressionLevel(t *testing.T) {
	t.Parallel()
	sizes := map[string]int64{}
	rows := 100_000
	if testing.Short() {
		rows = 20_000
	}
	for _, level := range []string{"", "1", "3", "9"} {
		cat, _ := catalogtest.New(t)
		props := iceberg.Properties{}
		if level != "" {
			props[icetable.ParquetCompressionLevelKey] = level
		}
		ident := catalogtest.CreateTable(t, cat, "level", orderdata.Schema, orderdata.Spec, props)
		w := open(t, cat, ident, table.WithParallelWrite(1, 1<<30))
		replaceDay(t, w, day0, rows)
		files := liveFiles(t, w.Table())
		require.Len(t, files, 1)
		sizes[level] = files[0].FileSizeBytes()
	}
	t.Logf("file bytes by level: %v", sizes)
	assert.Equal(t, sizes["1"], sizes[""], "no level set: level 1")
	assert.NotEqual(t, sizes["3"], sizes[""], "level 3 honored")
	assert.Less(t, sizes["9"], sizes["1"], "level 9 honored")
}
