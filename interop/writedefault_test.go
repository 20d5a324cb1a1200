//go:build interop

package interop

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/table"
)

// TestWriteDefault: on a format-v3 table, icerun adds the column tier
// with an InitialDefault ("std": initial-default and write-default), then
// replaces a partition with rows that lack it. Spark and PyIceberg read
// "std" for those rows (icerun wrote the write-default) and for the rows
// written before the column existed (the initial-default).
func TestWriteDefault(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		ctx := context.Background()
		sch := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		)
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		c.CreateTable(t, "tiers", sch, spec, iceberg.Properties{"format-version": "3"})
		fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}}
		rows := func(region string, from, n int) arrow.RecordBatch {
			return batch(fields, n, func(b *array.RecordBuilder, i int) {
				b.Field(0).(*array.Int64Builder).Append(int64(from + i))
				b.Field(1).(*array.StringBuilder).Append(region)
			})
		}
		w := open(t, c, "tiers")
		if _, err := w.ReplacePartitions(ctx, reader(t, rows("eu", 0, 3))); err != nil {
			t.Fatal(err)
		}
		if err := w.AddColumn(ctx, table.NewColumn{Name: "tier", Type: iceberg.PrimitiveTypes.String, InitialDefault: iceberg.NewLiteral("std")}); err != nil {
			t.Fatal(err)
		}
		key, err := w.Key("region=us")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ReplacePartition(ctx, key, reader(t, rows("us", 100, 2))); err != nil {
			t.Fatal(err)
		}

		withTier := append(append([]arrow.Field{}, fields...), arrow.Field{Name: "tier", Type: arrow.BinaryTypes.String, Nullable: true})
		want := func(region string, from, n int) arrow.RecordBatch {
			return batch(withTier, n, func(b *array.RecordBuilder, i int) {
				b.Field(0).(*array.Int64Builder).Append(int64(from + i))
				b.Field(1).(*array.StringBuilder).Append(region)
				b.Field(2).(*array.StringBuilder).Append("std")
			})
		}
		res := e.Batch(t, []Request{
			SparkSQL("SELECT id, region, tier FROM " + c.Spark("tiers")),
			PyIcebergScan(c.Name, c.Py("tiers"), Scan{}),
		})
		SameRows(t, "spark", RowsOf(want("eu", 0, 3), want("us", 100, 2)), res[0].Named())
		SameRows(t, "pyiceberg", RowsOf(want("eu", 0, 3), want("us", 100, 2)), res[1].Named())
	})
}
