package table_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// Replace one day of orders, then run the same day again: the rerun finds
// the partition already holds this input and makes no snapshot.
func ExampleWriter_ReplacePartition() {
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
	key, err := w.Key("event_date=2026-07-14")
	if err != nil {
		panic(err)
	}
	for range 2 {
		rows := orderdata.Reader(orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 100), 32)
		res, err := w.ReplacePartition(ctx, key, rows)
		rows.Release()
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Partitions, "added", res.AddedRows, "unchanged", res.Unchanged)
	}
	// Output:
	// [event_date=2026-07-14] added 100 unchanged false
	// [event_date=2026-07-14] added 100 unchanged true
}

// Replace exactly the partitions the rows produce: here two days.
func ExampleWriter_ReplacePartitions() {
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
	d := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	rows := orderdata.Reader(append(orderdata.Day(d, 10), orderdata.Day(d.AddDate(0, 0, 1), 5)...), 4)
	defer rows.Release()
	res, err := w.ReplacePartitions(ctx, rows)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Partitions, res.AddedRows)
	// Output:
	// [event_date=2026-07-14 event_date=2026-07-15] 15
}
