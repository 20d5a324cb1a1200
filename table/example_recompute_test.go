package table_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// Recompute a daily rollup from its source partition (dailyRevenue is in
// recompute_test.go): run twice, the second run finds it unchanged.
func ExampleWriter_Recompute() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, src, err := orderdata.Open(ctx, dir) // the embedded catalog with shop.fact_orders
	if err != nil {
		fmt.Println(err)
		return
	}
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	orders, _ := table.Open(ctx, cat, src)
	okey, _ := orders.Key("event_date=2026-07-14")
	rows := orderdata.Reader(orderdata.Day(day, 25), 10)
	defer rows.Release()
	if _, err := orders.ReplacePartition(ctx, okey, rows); err != nil {
		fmt.Println(err)
		return
	}

	dst := icetable.Identifier{"shop", "daily_revenue"}
	if _, err := cat.CreateTable(ctx, dst, revenueSchema, catalog.WithPartitionSpec(&revenueSpec)); err != nil {
		fmt.Println(err)
		return
	}
	rollup, _ := table.Open(ctx, cat, dst, table.WithCodeVersion("rollup-v1"))
	rkey, _ := rollup.Key("event_date=2026-07-14")
	srcTbl, _ := cat.LoadTable(ctx, src)
	skey, _ := partition.ParseKey(srcTbl.Spec(), srcTbl.Schema(), "event_date=2026-07-14")
	for range 2 {
		res, err := rollup.Recompute(ctx, rkey, table.Source{Table: srcTbl, Key: skey}, dailyRevenue(arrow.Date32FromTime(day)))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(res.Partitions, "rows", res.AddedRows, "unchanged", res.Unchanged)
	}
	// Output:
	// [event_date=2026-07-14] rows 1 unchanged false
	// [event_date=2026-07-14] rows 1 unchanged true
}

// Add a nullable column; the change is recorded with the code version.
func ExampleWriter_AddColumn() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := table.Open(ctx, cat, ident, table.WithCodeVersion("v2"))
	if err := w.AddColumn(ctx, table.NewColumn{Name: "channel", Type: iceberg.PrimitiveTypes.String, Doc: "web or store"}); err != nil {
		fmt.Println(err)
		return
	}
	f, ok := w.Table().Schema().FindFieldByName("channel")
	fmt.Println(ok, f.ID, f.Type, f.Required)
	// Output: true 7 string false
}

// Add a column and a field of a struct column; a rerun adds nothing, and
// a type the table's column does not fit is refused.
func ExampleWriter_AddColumns() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := table.Open(ctx, cat, ident)
	geo := func(fields ...string) table.NewColumn {
		st := &iceberg.StructType{}
		for _, f := range fields {
			st.FieldList = append(st.FieldList, iceberg.NestedField{Name: f, Type: iceberg.PrimitiveTypes.Float64})
		}
		return table.NewColumn{Name: "geo", Type: st}
	}
	for _, cols := range [][]table.NewColumn{
		{{Name: "channel", Type: iceberg.PrimitiveTypes.String}, geo("lat")},
		{geo("lat", "lon")},
		{geo("lat", "lon"), {Name: "channel", Type: iceberg.PrimitiveTypes.String}},
	} {
		change, err := w.AddColumns(ctx, cols...)
		fmt.Println(len(change.Added), "added", err)
	}
	_, err = w.AddColumns(ctx, table.NewColumn{Name: "geo", Type: iceberg.PrimitiveTypes.Int64})
	fmt.Println(errors.Is(err, table.ErrSchemaChange))
	// Output:
	// 2 added <nil>
	// 1 added <nil>
	// 0 added <nil>
	// true
}
