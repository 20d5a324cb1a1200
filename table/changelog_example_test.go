package table_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// Apply a change stream of orders keyed by order_id and ordered by
// event_ts, where a row with currency VOID deletes its order: a late
// older version of an order changes nothing, a delete removes the order
// and a rerun of the same batch is a no-op.
func ExampleWriter_ApplyChanges() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir) // the embedded default catalog
	if err != nil {
		panic(err)
	}
	w, err := table.Open(ctx, cat, ident)
	if err != nil {
		panic(err)
	}
	cs := table.ChangeSpec{
		Key:    []string{"order_id"},
		Order:  []string{"event_ts"},
		Delete: table.DeleteWhen{Column: "currency", Value: "VOID"},
	}
	day := orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 3)
	late := day[1]
	late.EventTime, late.Amount = late.EventTime.Add(-time.Minute), 1
	void := day[2]
	void.EventTime, void.Currency = void.EventTime.Add(time.Minute), "VOID"
	second := []orderdata.Order{late, void}
	for _, batch := range [][]orderdata.Order{day, second, second} {
		rows := orderdata.Reader(batch, 4)
		res, err := w.ApplyChanges(ctx, rows, cs)
		rows.Release()
		if err != nil {
			panic(err)
		}
		fmt.Println("upserted", res.Upserted, "deleted", res.Deleted, "stale", res.Stale, "unchanged", res.Unchanged)
	}
	// Output:
	// upserted 3 deleted 0 stale 0 unchanged false
	// upserted 0 deleted 1 stale 1 unchanged false
	// upserted 0 deleted 0 stale 2 unchanged true
}
