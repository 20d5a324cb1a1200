package table_test

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// escapedRow is a row whose partition values iceberg-go escapes in a data
// file's path: non-ASCII, separators, '%', '+' of an exponent, infinity.
type escapedRow struct {
	id int64
	s  string
	d  float64
}

var escapedRows = []escapedRow{
	{1, "café", 1e300},
	{2, "café", 1e300},
	{3, "a b/c+d=%41", -1.5e-7},
	{4, "x:y?#&ü", math.Inf(1)},
	{5, "日本", 0},
}

func escapedReader(rows []escapedRow) array.RecordReader {
	return catalogtest.Reader([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, len(rows), func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(rows[i].id)
		b.Field(1).(*array.StringBuilder).Append(rows[i].s)
		b.Field(2).(*array.Float64Builder).Append(rows[i].d)
	})
}

// assertFilePathsLiteral fails unless every data file any snapshot of the
// table references exists at its file_path taken literally, without URL
// decoding: how Java's HadoopFileIO and S3FileIO and PyIceberg open it.
func assertFilePathsLiteral(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, step string) {
	t.Helper()
	n := 0
	for _, p := range catalogtest.Referenced(t, cat, ident) {
		if !strings.HasSuffix(p, ".parquet") {
			continue
		}
		n++
		assert.NotContains(t, p, "%", "%s: file_path %s", step, p)
		_, err := os.Stat(strings.TrimPrefix(p, "file://"))
		assert.NoError(t, err, "%s: file_path %s, taken literally, names no file", step, p)
	}
	assert.NotZero(t, n, "%s: no data files", step)
}

// TestDataFilePathsAreLiteral writes partitions whose values iceberg-go
// escapes in paths through every write path, and checks after each that
// every data file is where its file_path says, read literally.
func TestDataFilePathsAreLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		props iceberg.Properties
	}{
		{"default layout", nil},
		{"object store", iceberg.Properties{icetable.ObjectStoreEnabledKey: "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat, dir := catalogtest.New(t)
			sch := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
				iceberg.NestedField{ID: 3, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
			)
			spec := iceberg.NewPartitionSpec(
				iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "s", Transform: iceberg.IdentityTransform{}},
				iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "d", Transform: iceberg.IdentityTransform{}},
			)
			ident := catalogtest.CreateTable(t, cat, "escaped", sch, spec, tc.props)
			w := open(t, cat, ident)

			_, err := w.ReplacePartitions(ctx, escapedReader(escapedRows))
			require.NoError(t, err)
			assertFilePathsLiteral(t, cat, ident, "ReplacePartitions")

			// The keys, from the files the dynamic write made.
			tbl, err := w.Refresh(ctx)
			require.NoError(t, err)
			pspec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
			require.NoError(t, err)
			var keys []partition.Key
			for _, f := range liveFiles(t, tbl) {
				k, err := pspec.KeyFromValues(f.Partition())
				require.NoError(t, err)
				keys = append(keys, k)
			}
			require.Len(t, keys, 4)
			cafe, err := pspec.KeyFromValues(map[int]any{1000: "café", 1001: 1e300})
			require.NoError(t, err)

			changed := []escapedRow{{1, "café", 1e300}, {6, "café", 1e300}}
			_, err = w.ReplacePartition(ctx, cafe, escapedReader(changed))
			require.NoError(t, err)
			assertFilePathsLiteral(t, cat, ident, "ReplacePartition")

			_, err = w.ReplaceWindow(ctx, keys, table.RejectLate, escapedReader(escapedRows))
			require.NoError(t, err)
			assertFilePathsLiteral(t, cat, ident, "ReplaceWindow")

			_, err = w.Upsert(ctx, escapedReader([]escapedRow{{3, "a b/c+d=%41", -1.5e-7}, {7, "日本", 0}, {10, "a b/c+d=%41", -1.5e-7}, {11, "a b/c+d=%41", -1.5e-7}}), "id")
			require.NoError(t, err)
			assertFilePathsLiteral(t, cat, ident, "Upsert")

			src, err := w.Refresh(ctx)
			require.NoError(t, err)
			_, err = w.Recompute(ctx, cafe, table.Source{Table: src, Key: cafe}, func(_ context.Context, rows array.RecordReader) (array.RecordReader, error) {
				defer rows.Release()
				return escapedReader([]escapedRow{{8, "café", 1e300}}), nil
			})
			require.NoError(t, err)
			assertFilePathsLiteral(t, cat, ident, "Recompute")

			// Spec evolution: a key of the new spec rewrites the old
			// spec's files of its partition without the key's rows.
			tbl, err = w.Refresh(ctx)
			require.NoError(t, err)
			txn := tbl.NewTransaction()
			require.NoError(t, txn.UpdateSpec(true).AddField("id", iceberg.BucketTransform{NumBuckets: 2}, "idb").Commit())
			_, err = txn.Commit(ctx)
			require.NoError(t, err)
			w = open(t, cat, ident)
			tbl, err = w.Refresh(ctx)
			require.NoError(t, err)
			pspec, err = partition.NewSpec(tbl.Spec(), tbl.Schema())
			require.NoError(t, err)
			bucket := iceberg.BucketTransform{NumBuckets: 2}.Transformer(iceberg.PrimitiveTypes.Int64)
			rows := []escapedRow{{3, "a b/c+d=%41", -1.5e-7}}
			k, err := pspec.KeyFromValues(map[int]any{1000: rows[0].s, 1001: rows[0].d, 1002: bucket(rows[0].id).Val})
			require.NoError(t, err)
			before := map[string]bool{}
			for _, f := range liveFiles(t, tbl) {
				before[f.FilePath()] = true
			}
			_, err = w.ReplacePartition(ctx, k, escapedReader(rows))
			require.NoError(t, err)
			tbl, err = w.Refresh(ctx)
			require.NoError(t, err)
			rewritten := 0
			for _, f := range liveFiles(t, tbl) {
				if !before[f.FilePath()] {
					rewritten++
				}
			}
			// The key's file, and the older-spec file rewritten
			// without the key's rows (ids 10 and 11 are in bucket 0).
			require.Equal(t, 2, rewritten, "new files")
			assertFilePathsLiteral(t, cat, ident, "older-spec rewrite")
			assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir))
		})
	}
}

// TestSharedPartitionPathRefused: a null string and the string "null" make
// the same folder name, which iceberg-go's partitioned writer takes for one
// partition; the dynamic write fails and leaves the table as it was,
// instead of recording the null rows under "null".
func TestSharedPartitionPathRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "s", Transform: iceberg.IdentityTransform{}})
	ident := catalogtest.CreateTable(t, cat, "shared", sch, spec, nil)
	w := open(t, cat, ident)
	rows := func(vals ...*string) array.RecordReader {
		return catalogtest.Reader([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, len(vals), func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if vals[i] == nil {
				b.Field(1).(*array.StringBuilder).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(*vals[i])
			}
		})
	}
	text, x := "null", "x"
	_, err := w.ReplacePartitions(ctx, rows(&x))
	require.NoError(t, err)
	before := catalogtest.CanonicalScan(t, cat, ident)
	for _, order := range [][]*string{{nil, &text, &x}, {&text, nil}} {
		_, err = w.ReplacePartitions(ctx, rows(order...))
		require.ErrorIs(t, err, table.ErrSharedPartitionPath)
		assert.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
		assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir))
	}
	// In separate calls both partitions are written.
	_, err = w.ReplacePartitions(ctx, rows(nil))
	require.NoError(t, err)
	_, err = w.ReplacePartitions(ctx, rows(&text))
	require.NoError(t, err)
	tbl, err := w.Refresh(ctx)
	require.NoError(t, err)
	var vals []any
	for _, f := range liveFiles(t, tbl) {
		vals = append(vals, f.Partition()[1000])
	}
	assert.ElementsMatch(t, []any{nil, "null", "x"}, vals)
}
