//go:build interop

package interop

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// TestBasicReplace: one identity-partitioned table, two partitions written
// and one replaced by icerun; Spark and PyIceberg read exactly the rows.
func TestBasicReplace(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		ctx := context.Background()
		sch := iceberg.NewSchema(0,
			iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
			iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		)
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
		c.CreateTable(t, "basic", sch, spec, iceberg.Properties{"format-version": "2"})
		fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}}
		rows := func(region string, from, n int) arrow.RecordBatch {
			return batch(fields, n, func(b *array.RecordBuilder, i int) {
				b.Field(0).(*array.Int64Builder).Append(int64(from + i))
				b.Field(1).(*array.StringBuilder).Append(region)
			})
		}
		w := open(t, c, "basic")
		eu, us, eu2 := rows("eu", 0, 3), rows("us", 100, 2), rows("eu", 200, 4)
		if _, err := w.ReplacePartitions(ctx, reader(t, eu, us)); err != nil {
			t.Fatal(err)
		}
		key, err := w.Key("region=eu")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ReplacePartition(ctx, key, reader(t, eu2)); err != nil {
			t.Fatal(err)
		}
		want := RowsOf(us, eu2)
		res := e.Batch(t, []Request{
			SparkSQL("SELECT * FROM " + c.Spark("basic")),
			PyIcebergScan(c.Name, c.Py("basic"), Scan{}),
			SparkSQL(fmt.Sprintf("SELECT * FROM %s WHERE region = 'eu'", c.Spark("basic"))),
			PyIcebergScan(c.Name, c.Py("basic"), Scan{Filter: "region == 'eu'"}),
		})
		SameRows(t, "spark full scan", want, res[0].Named())
		SameRows(t, "pyiceberg full scan", want, res[1].Named())
		SameRows(t, "spark region=eu", RowsOf(eu2), res[2].Named())
		SameRows(t, "pyiceberg region=eu", RowsOf(eu2), res[3].Named())
	})
}
