package table_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// binarySchema is an id and a binary partition source column.
var binarySchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
)

// emptyBinaryRows is one batch of rows ids whose b is the empty byte
// string (not null), with a nil value buffer: what array.Concatenate and
// other kernels make of empty values.
func emptyBinaryRows(t *testing.T, ids ...int64) array.RecordReader {
	t.Helper()
	n := len(ids)
	idb := array.NewInt64Builder(memory.DefaultAllocator)
	defer idb.Release()
	idb.AppendValues(ids, nil)
	idArr := idb.NewArray()
	defer idArr.Release()
	offsets := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(make([]int32, n+1)))
	data := array.NewData(arrow.BinaryTypes.Binary, n, []*memory.Buffer{nil, offsets, nil}, nil, 0, 0)
	defer data.Release()
	bArr := array.NewBinaryData(data)
	defer bArr.Release()
	require.Nil(t, bArr.ValueBytes(), "the value buffer must be nil")
	require.Equal(t, 0, bArr.NullN())
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	rec := array.NewRecordBatch(sc, []arrow.Array{idArr, bArr}, int64(n))
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	return rdr
}

// TestEmptyBinaryPartitionEveryPath writes rows whose binary partition
// value is empty (not null) through the dynamic path, then replaces the
// partition "b=" statically: the replacement must find and delete the
// dynamic write's rows. Every data file must be recorded in the manifest
// under the key that names it, never as null.
func TestEmptyBinaryPartitionEveryPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		tr   iceberg.Transform
	}{
		{"identity", iceberg.IdentityTransform{}},
		{"truncate", iceberg.TruncateTransform{Width: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "b", Transform: tc.tr})
			ident := catalogtest.CreateTable(t, cat, "bin", binarySchema, spec, nil)
			w := open(t, cat, ident)

			rows := emptyBinaryRows(t, 1, 2)
			res, err := w.ReplacePartitions(ctx, rows)
			rows.Release()
			require.NoError(t, err)
			require.Equal(t, []string{"b="}, res.Partitions)
			checkFileKeys(t, cat, ident, "b=")

			rows = emptyBinaryRows(t, 3)
			res, err = w.ReplacePartition(ctx, key(t, w, "b="), rows)
			rows.Release()
			require.NoError(t, err)
			assert.EqualValues(t, 2, res.DeletedRows, "the dynamic write's rows are in partition b=")
			assert.Equal(t, "3|\n", string(catalogtest.CanonicalScan(t, cat, ident)))
			checkFileKeys(t, cat, ident, "b=")
		})
	}
}

// checkFileKeys checks that every live data file of the table is recorded
// with partition values whose key is want.
func checkFileKeys(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, want string) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	for _, e := range liveEntries(t, tbl) {
		k, err := spec.KeyFromValues(e.DataFile().Partition())
		require.NoError(t, err)
		assert.Equal(t, want, k.String(), "partition of %s as the manifest records it: %#v", e.DataFile().FilePath(), e.DataFile().Partition())
	}
}

// liveEntries are the live manifest entries of tbl's current snapshot.
func liveEntries(t *testing.T, tbl *icetable.Table) []iceberg.ManifestEntry {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	mfs, err := tbl.CurrentSnapshot().Manifests(fsys)
	require.NoError(t, err)
	var out []iceberg.ManifestEntry
	for _, mf := range mfs {
		es, err := mf.FetchEntries(fsys, true)
		require.NoError(t, err)
		out = append(out, es...)
	}
	return out
}

// TestZeroRowBatchesWriteNoFile feeds inputs holding 0-row batches: no
// data file with record_count 0 is committed, whatever the number of
// writers, and an input of only 0-row batches empties the partition with
// a delete snapshot, as Java does.
func TestZeroRowBatchesWriteNoFile(t *testing.T) {
	t.Parallel()
	for _, writers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d writers", writers), func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 1}})
			ident := catalogtest.CreateTable(t, cat, "ids", binarySchema, spec, nil)
			w := open(t, cat, ident, table.WithParallelWrite(writers, 2))
			k := key(t, w, "id_bucket=0")

			// The second writer starts on a 0-row batch and gets nothing else.
			res, err := w.ReplacePartition(ctx, k, idBatches(t, 3, 0))
			require.NoError(t, err)
			assert.EqualValues(t, 3, res.AddedRows)
			checkNoEmptyFiles(t, cat, ident)
			tbl, err := cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			assert.Equal(t, icetable.OpAppend, tbl.CurrentSnapshot().Summary.Operation)

			res, err = w.ReplacePartition(ctx, k, idBatches(t, 0, 2, 0, 0, 1, 0))
			require.NoError(t, err)
			assert.EqualValues(t, 3, res.AddedRows)
			checkNoEmptyFiles(t, cat, ident)

			res, err = w.ReplacePartitions(ctx, idBatches(t, 0, 1, 0, 2, 0))
			require.NoError(t, err)
			assert.EqualValues(t, 3, res.AddedRows)
			checkNoEmptyFiles(t, cat, ident)

			res, err = w.ReplacePartition(ctx, k, idBatches(t, 0, 0))
			require.NoError(t, err)
			assert.EqualValues(t, 0, res.AddedRows)
			assert.EqualValues(t, 3, res.DeletedRows)
			tbl, err = cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			assert.Equal(t, icetable.OpDelete, tbl.CurrentSnapshot().Summary.Operation)
			assert.Empty(t, catalogtest.CanonicalScan(t, cat, ident))
		})
	}
}

// idBatches is a reader of batches of the given row counts (ids counting
// from 1, b null).
func idBatches(t *testing.T, sizes ...int) array.RecordReader {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	id := int64(0)
	for _, n := range sizes {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for range n {
			id++
			b.Field(0).(*array.Int64Builder).Append(id)
			b.Field(1).AppendNull()
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rdr, err := array.NewRecordReader(sc, recs)
	require.NoError(t, err)
	for _, r := range recs {
		r.Release()
	}
	t.Cleanup(rdr.Release)
	return rdr
}

// checkNoEmptyFiles checks that no live data file of the table holds 0 rows.
func checkNoEmptyFiles(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	for _, e := range liveEntries(t, tbl) {
		assert.NotZero(t, e.DataFile().Count(), "data file %s has record_count 0", e.DataFile().FilePath())
	}
}

// TestTruncateEdgeKeys writes rows whose truncations are the edge values
// Java and iceberg-go produce (the wrapped int minimum, a decimal one digit
// past its precision) dynamically, then replaces that partition statically:
// the replacement finds and deletes the dynamic write's rows.
func TestTruncateEdgeKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "dec", Type: iceberg.DecimalTypeOf(9, 2)},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "i_trunc", Transform: iceberg.TruncateTransform{Width: 10}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "dec_trunc", Transform: iceberg.TruncateTransform{Width: 100}},
	)
	ident := catalogtest.CreateTable(t, cat, "edges", sch, spec, nil)
	w := open(t, cat, ident)
	decType := &arrow.Decimal128Type{Precision: 9, Scale: 2}
	fields := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "dec", Type: decType, Nullable: true},
	}
	rows := func(ids []int64, is []int32, decs []int64) array.RecordReader {
		return catalogtest.Reader(fields, len(ids), func(b *array.RecordBuilder, r int) {
			b.Field(0).(*array.Int64Builder).Append(ids[r])
			b.Field(1).(*array.Int32Builder).Append(is[r])
			b.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(decs[r]))
		})
	}
	const edge = "i_trunc=2147483646/dec_trunc=-10000000.00"

	in := rows([]int64{1, 2}, []int32{math.MinInt32, math.MinInt32 + 1}, []int64{-999999999, -999999950})
	res, err := w.ReplacePartitions(ctx, in)
	in.Release()
	require.NoError(t, err)
	require.Equal(t, []string{edge}, res.Partitions)

	in = rows([]int64{3}, []int32{math.MinInt32 + 2}, []int64{-999999901})
	res, err = w.ReplacePartition(ctx, key(t, w, edge), in)
	in.Release()
	require.NoError(t, err)
	assert.EqualValues(t, 2, res.DeletedRows, "the dynamic write's rows are in %s", edge)
	assert.Equal(t, "3|-2147483646|-9999999.01\n", string(catalogtest.CanonicalScan(t, cat, ident)))
	checkFileKeys(t, cat, ident, edge)
}
