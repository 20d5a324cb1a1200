// Command daily loads one day of orders into fact_orders, partitioned by
// event_date, and then runs the same day again, as a retry would.
//
// The input is what landed in storage for two processing days. An order
// placed at 23:58 on the 14th landed with the 15th's files; because the
// partition key comes from the event time, not from the run's date, the
// run for event_date=2026-07-14 picks it up from the later landing, and the
// rerun changes nothing.
//
//	go run ./examples/daily [-warehouse ./warehouse] [-day 2026-07-14]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

func main() {
	warehouse := flag.String("warehouse", "./warehouse", "folder of the embedded catalog and table data")
	dayFlag := flag.String("day", "2026-07-14", "the event_date partition to load (the run's key, never the clock)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *warehouse, *dayFlag); err != nil {
		fmt.Fprintln(os.Stderr, "daily:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, warehouse, dayText string) error {
	day, err := time.Parse(time.DateOnly, dayText)
	if err != nil {
		return fmt.Errorf("bad -day: %w", err)
	}
	cat, err := catalogconfig.OpenLocal(ctx, warehouse)
	if err != nil {
		return err
	}
	ident := icetable.Identifier{"shop", "fact_orders"}
	if err := orderdata.CreateTable(ctx, cat, ident); err != nil {
		return err
	}
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("daily-v1"))
	if err != nil {
		return err
	}
	key, err := w.Key("event_date=" + dayText)
	if err != nil {
		return err
	}

	// What landed for processing days D and D+1: D's orders except the one
	// at 23:58, which arrived after midnight with D+1's orders.
	today := orderdata.Day(day, 1000)
	late := today[len(today)-1]
	landed := append(append([]orderdata.Order{}, today[:len(today)-1]...), orderdata.Day(day.AddDate(0, 0, 1), 1000)...)
	landed = append(landed, late)

	for _, name := range []string{"run", "rerun"} {
		rows := orderdata.Reader(select1(landed, day), 256)
		res, err := w.ReplacePartition(ctx, key, rows)
		rows.Release()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-5s %s: rows=%d snapshot=%d unchanged=%t attempts=%d\n", name, key, res.AddedRows, res.SnapshotID, res.Unchanged, res.Attempts)
	}
	n, err := countRows(ctx, w.Table(), key)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "partition %s holds %d rows (the 23:58 order included: %t)\n", key, n, n == int64(len(today)))
	return nil
}

// select1 is the job's input for one event_date: the landed orders whose
// event time falls on day, wherever they landed.
func select1(landed []orderdata.Order, day time.Time) []orderdata.Order {
	var out []orderdata.Order
	for _, o := range landed {
		if o.EventTime.UTC().Format(time.DateOnly) == day.Format(time.DateOnly) {
			out = append(out, o)
		}
	}
	return out
}

// countRows counts the rows of partition key with a scan, as any reader
// would see them.
func countRows(ctx context.Context, tbl *icetable.Table, key partition.Key) (int64, error) {
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return 0, err
	}
	_, batches, err := tbl.Scan(icetable.WithRowFilter(spec.Filter(key))).ToArrowRecords(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	for rec, err := range batches {
		if err != nil {
			return 0, err
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n, nil
}
