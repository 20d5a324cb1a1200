// Command backfill runs the life of a fact_orders table as a loop over
// partitions:
//
//  1. a 400-day backfill, loaded in reverse order with 4 workers;
//  2. a "bug fix" in the amount calculation, recomputed for 14 months with
//     a new code version;
//  3. a nightly run with a 3-day lookback that picks up late orders: those
//     1 and 2 days late land in their partitions; those 5 days late are
//     outside the window and go to fact_orders_late.
//
// Every job is a function of (partition key, immutable inputs): the end
// day is a flag, never the clock. It prints progress and the final counts.
//
//	go run ./examples/backfill [-warehouse ./warehouse] [-end 2026-07-14]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

const (
	days        = 400 // the backfill
	fixDays     = 14 * 30
	ordersPerDy = 500
)

func main() {
	warehouse := flag.String("warehouse", "./warehouse", "folder of the embedded catalog and table data")
	endFlag := flag.String("end", "2026-07-14", "the last day of the backfill (the nightly run is the day after)")
	flag.Parse()
	if err := run(context.Background(), *warehouse, *endFlag); err != nil {
		fmt.Fprintln(os.Stderr, "backfill:", err)
		os.Exit(1)
	}
}

// dayOf is the date of a key of the fact_orders spec.
func dayOf(k partition.Key) time.Time {
	d, _ := time.Parse("event_date=2006-01-02", k.String())
	return d
}

// v1 is the original job: ordersPerDy orders of the key's day.
func v1(_ context.Context, k partition.Key) (array.RecordReader, error) {
	return orderdata.Reader(orderdata.Day(dayOf(k), ordersPerDy), 4096), nil
}

// v2 is the bug fix: amounts were missing a 1% fee.
func v2(_ context.Context, k partition.Key) (array.RecordReader, error) {
	orders := orderdata.Day(dayOf(k), ordersPerDy)
	for i := range orders {
		orders[i].Amount += orders[i].Amount / 100
	}
	return orderdata.Reader(orders, 4096), nil
}

// landed is the nightly input of day end: every order of the window's
// days known by then (with the late ones of end-1 and end-2), plus
// orders that arrived today for end-5, too late for a 3-day window.
func landed(end time.Time) []orderdata.Order {
	var in []orderdata.Order
	for d := -2; d <= 0; d++ {
		orders := orderdata.Day(end.AddDate(0, 0, d), ordersPerDy)
		for i := range orders {
			orders[i].Amount += orders[i].Amount / 100
		}
		in = append(in, orders...)
	}
	late := func(daysLate, n int) {
		d := end.AddDate(0, 0, -daysLate)
		for i := range n {
			o := orderdata.At(d, ordersPerDy+i, ordersPerDy+n) // new order ids, after the day's others
			o.ID += 50_000_000                                 // a separate id range for late orders
			in = append(in, o)
		}
	}
	late(1, 7)
	late(2, 3)
	late(5, 2)
	return in
}

func run(ctx context.Context, warehouse, endText string) error {
	end, err := time.Parse(time.DateOnly, endText)
	if err != nil {
		return fmt.Errorf("bad -end: %w", err)
	}
	cat, err := catalogconfig.OpenLocal(ctx, warehouse)
	if err != nil {
		return err
	}
	ident := icetable.Identifier{"examples", "backfill_orders"}
	if err := purge(ctx, cat, ident, table.LateTable(ident)); err != nil { // a fresh start on every run
		return err
	}
	if err := orderdata.CreateTable(ctx, cat, ident); err != nil {
		return err
	}
	spec := func(w *table.Writer) *partition.Spec {
		s, _ := partition.NewSpec(w.Table().Spec(), w.Table().Schema())
		return s
	}

	// 1. The backfill: 400 days, reverse, 4 workers, 8 days per snapshot.
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("orders-v1"))
	if err != nil {
		return err
	}
	last, err := w.Key("event_date=" + endText)
	if err != nil {
		return err
	}
	keys, err := spec(w).Last(last, days)
	if err != nil {
		return err
	}
	opts := []backfill.Option{backfill.WithWorkers(4), backfill.WithKeysPerSnapshot(8), backfill.WithOrder(backfill.Reverse), backfill.WithClock(time.Now), backfill.WithProgress(printProgress)}
	fmt.Printf("backfill of %d days, %s .. %s, code orders-v1\n", len(keys), keys[0], keys[len(keys)-1])
	rep, err := backfill.Run(ctx, w, keys, v1, opts...)
	if err != nil {
		return err
	}
	printReport(rep)

	// 2. The bug fix: 14 months recomputed by a new code version.
	w2, err := table.Open(ctx, cat, ident, table.WithCodeVersion("orders-v2-fee-fix"))
	if err != nil {
		return err
	}
	keys, err = spec(w2).Last(last, fixDays)
	if err != nil {
		return err
	}
	fmt.Printf("\nbug fix: %d days, %s .. %s, code orders-v2-fee-fix\n", len(keys), keys[0], keys[len(keys)-1])
	rep, err = backfill.Run(ctx, w2, keys, v2, append(opts, backfill.WithOrder(backfill.Forward), backfill.WithHygiene(backfill.Hygiene{PreviousVersionsMax: 8, ExpireRetainLast: 20}))...)
	if err != nil {
		return err
	}
	printReport(rep)

	// 3. The nightly run of the next day, 3-day lookback, late rows routed.
	night := end.AddDate(0, 0, 1)
	nk, err := w2.Key("event_date=" + night.Format(time.DateOnly))
	if err != nil {
		return err
	}
	window, err := spec(w2).Last(nk, 3)
	if err != nil {
		return err
	}
	res, err := w2.ReplaceWindow(ctx, window, table.RouteLate, orderdata.Reader(landed(night), 4096))
	if err != nil {
		return err
	}
	fmt.Printf("\nnightly %s, window %s .. %s: snapshot %d\n", night.Format(time.DateOnly), window[0], window[2], res.SnapshotID)
	for _, p := range res.PerPartition {
		fmt.Printf("  %s  +%d -%d rows  unchanged=%t\n", p.Key, p.AddedRows, p.DeletedRows, p.Unchanged)
	}
	fmt.Printf("  late rows: %d %v -> %s\n", res.LateRows, res.LateByPartition, res.LateTable)
	again, err := w2.ReplaceWindow(ctx, window, table.RouteLate, orderdata.Reader(landed(night), 4096))
	if err != nil {
		return err
	}
	fmt.Printf("  the same nightly run again: unchanged=%t, late rows %d (replaced, not added)\n", again.Unchanged, again.LateRows)

	return printCounts(ctx, cat, ident)
}

func printProgress(p backfill.Progress) {
	if p.Done%50 == 0 || p.Done == p.Total {
		fmt.Printf("  %3d/%d keys  %7d rows  %8.0f rows/s  ETA %s\n", p.Done, p.Total, p.Rows, p.RowsPerSec, p.ETA.Round(time.Second))
	}
}

func printReport(r backfill.Report) {
	fmt.Printf("  %d written, %d unchanged, %d skipped, %d failed; %d commits\n  metadata before: %s\n  metadata after:  %s\n",
		r.Written, r.Unchanged, r.Skipped, len(r.Failed), r.Commits, r.Before, r.After)
}

func printCounts(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) error {
	for _, id := range []icetable.Identifier{ident, table.LateTable(ident)} {
		tbl, err := cat.LoadTable(ctx, id)
		if err != nil {
			return err
		}
		var rows, files int64
		parts := map[string]bool{}
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			rows += t.File.Count()
			files++
			parts[fmt.Sprint(t.File.Partition())] = true
		}
		st, err := backfill.Measure(ctx, tbl)
		if err != nil {
			return err
		}
		fmt.Printf("\n%s: %d partitions, %d rows, %d data files; %s\n", id, len(parts), rows, files, st)
	}
	return nil
}

// purge drops the tables and deletes their files (data, manifests,
// metadata), so that a second run leaves no orphan files behind.
func purge(ctx context.Context, cat catalog.Catalog, idents ...icetable.Identifier) error {
	p, ok := cat.(catalog.PurgeableTable)
	if !ok {
		return fmt.Errorf("catalog %s cannot purge tables", cat.CatalogType())
	}
	for _, id := range idents {
		if err := p.PurgeTable(ctx, id); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			return fmt.Errorf("purge %v: %w", id, err)
		}
	}
	return nil
}
