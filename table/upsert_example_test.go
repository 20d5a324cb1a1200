package table_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// Upsert a day of orders by order_id, then a batch with one changed order,
// one new order and a redelivered one: the day holds each order once.
func ExampleWriter_Upsert() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir) // the embedded default catalog
	if err != nil {
		panic(err)
	}
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v1"))
	if err != nil {
		panic(err)
	}
	day := orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 10)
	changed := day[3]
	changed.Amount = 999
	extra := orderdata.At(day[0].EventTime, 10, 11)
	for _, batch := range [][]orderdata.Order{day, {changed, extra, day[5], day[5]}} {
		rows := orderdata.Reader(batch, 4)
		res, err := w.Upsert(ctx, rows, "order_id")
		rows.Release()
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Partitions, "rows before", res.DeletedRows, "after", res.AddedRows)
	}
	// Output:
	// [event_date=2026-07-14] rows before 0 after 10
	// [event_date=2026-07-14] rows before 10 after 11
}
