package table_test

import (
	"context"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// priceSchema has a decimal(9,2) column at the top level and in a struct.
var priceSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
	iceberg.NestedField{ID: 3, Name: "detail", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{ID: 4, Name: "price", Type: iceberg.DecimalTypeOf(9, 2)},
	}}},
)

var priceDecimal = &arrow.Decimal128Type{Precision: 9, Scale: 2}

var priceFields = []arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "amount", Type: priceDecimal, Nullable: true},
	{Name: "detail", Type: arrow.StructOf(arrow.Field{Name: "price", Type: priceDecimal, Nullable: true}), Nullable: true},
}

// priceRows is a reader of one row per unscaled value, id i+1: amount[i]
// in amount and price[i] in detail.price.
func priceRows(amount, price []decimal128.Num) array.RecordReader {
	return catalogtest.Reader(priceFields, len(amount), func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(int64(i + 1))
		b.Field(1).(*array.Decimal128Builder).Append(amount[i])
		st := b.Field(2).(*array.StructBuilder)
		st.Append(true)
		st.FieldBuilder(0).(*array.Decimal128Builder).Append(price[i])
	})
}

// TestWritesRefuseDecimalsBeyondPrecision: a decimal(9,2) value with more
// than 9 digits (9999999999.99, 12345678901234.56, -2^127 unscaled), at the
// top level or in a struct, fails every write with
// schema.ErrIncompatibleType under every partitioning, before anything is
// written: the table and its files are as they were. Parquet stores
// decimal(9,2) in 32 bits, so such a value would come back as another
// number.
func TestWritesRefuseDecimalsBeyondPrecision(t *testing.T) {
	t.Parallel()
	minI128 := decimal128.New(math.MinInt64, 0) // -2^127
	one := decimal128.FromI64(100)
	bad := []decimal128.Num{decimal128.FromI64(999999999999), decimal128.FromI64(1234567890123456), minI128}
	goodOf := func(n int) []decimal128.Num {
		g := make([]decimal128.Num, n)
		for i := range g {
			g[i] = one
		}
		return g
	}
	inputs := map[string]func() array.RecordReader{
		"top level": func() array.RecordReader { return priceRows(append(goodOf(1), bad...), goodOf(1+len(bad))) },
		"in a struct": func() array.RecordReader {
			return priceRows(goodOf(1+len(bad)), append(goodOf(1), bad...))
		},
	}
	specs := map[string]iceberg.PartitionSpec{
		"bucket":        partitionOf(2, "amount_bucket", iceberg.BucketTransform{NumBuckets: 4}),
		"truncate":      partitionOf(2, "amount_trunc", iceberg.TruncateTransform{Width: 100}),
		"identity":      partitionOf(2, "amount", iceberg.IdentityTransform{}),
		"nested bucket": partitionOf(4, "price_bucket", iceberg.BucketTransform{NumBuckets: 4}),
		"unpartitioned": *iceberg.UnpartitionedSpec,
	}
	ctx := context.Background()
	writes := map[string]func(w *table.Writer, good commit.Result, rows array.RecordReader) error{
		"ReplacePartition": func(w *table.Writer, good commit.Result, rows array.RecordReader) error {
			_, err := w.ReplacePartition(ctx, key(t, w, good.Partitions[0]), rows)
			return err
		},
		"ReplacePartitions": func(w *table.Writer, _ commit.Result, rows array.RecordReader) error {
			_, err := w.ReplacePartitions(ctx, rows)
			return err
		},
		"Upsert": func(w *table.Writer, _ commit.Result, rows array.RecordReader) error {
			_, err := w.Upsert(ctx, rows, "id")
			return err
		},
		"ReplaceWindow": func(w *table.Writer, good commit.Result, rows array.RecordReader) error {
			_, err := w.ReplaceWindow(ctx, []partition.Key{key(t, w, good.Partitions[0])}, table.DropLate, rows)
			return err
		},
		"Recompute": func(w *table.Writer, good commit.Result, rows array.RecordReader) error {
			agg := func(_ context.Context, src array.RecordReader) (array.RecordReader, error) {
				for src.Next() {
				}
				rows.Retain()
				return rows, src.Err()
			}
			_, err := w.Recompute(ctx, key(t, w, good.Partitions[0]), table.Source{Table: w.Table()}, agg)
			return err
		},
	}
	// Under -short every other combination: each write on each spec with
	// one of the inputs, each input on each spec and with each write.
	for i, specName := range slices.Sorted(maps.Keys(specs)) {
		spec := specs[specName]
		for j, inName := range slices.Sorted(maps.Keys(inputs)) {
			input := inputs[inName]
			for k, name := range slices.Sorted(maps.Keys(writes)) {
				write := writes[name]
				if testing.Short() && (i+j+k)%2 == 1 {
					continue
				}
				t.Run(specName+"/"+inName+"/"+name, func(t *testing.T) {
					cat, dir := catalogtest.New(t)
					ident := catalogtest.CreateTable(t, cat, "prices", priceSchema, spec, nil)
					w := open(t, cat, ident)
					goodRows := priceRows(goodOf(1), goodOf(1))
					good, err := w.ReplacePartitions(ctx, goodRows)
					goodRows.Release()
					require.NoError(t, err)
					scan, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)

					rows := input()
					defer rows.Release()
					err = write(w, good, rows)
					require.ErrorIs(t, err, schema.ErrIncompatibleType)
					assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "table changed")
					assert.Equal(t, files, catalogtest.DataFiles(t, dir), "orphan files left behind")
					assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
				})
			}
		}
	}
}

// partitionOf is the spec of one partition field of source column id.
func partitionOf(source int, name string, tr iceberg.Transform) iceberg.PartitionSpec {
	return iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{source}, FieldID: 1000, Name: name, Transform: tr})
}
