//go:build interop

package interop

import (
	"context"
	"fmt"
	"testing"
)

// TestBasicReplace: one identity-partitioned table, two partitions written
// and one replaced by icerun; Spark and PyIceberg read exactly the rows.
func TestBasicReplace(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		ctx := context.Background()
		rows := regionTable(t, c, "basic")
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
