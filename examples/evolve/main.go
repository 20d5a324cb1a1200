// Command evolve shows a rerun after a schema change: fact_orders' column
// currency is renamed to currency_code, then a 2025 partition is rerun by a
// producer that still sends "currency". Resolution goes by field ID and the
// name mapping, never by position, so the values land in currency_code and
// no other column shifts. It prints the partition before and after.
//
//	go run ./examples/evolve [-warehouse DIR]   (default: a fresh temp folder)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

func main() {
	warehouse := flag.String("warehouse", "", "folder of the embedded catalog (default: a new temp folder, removed at exit)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *warehouse); err != nil {
		fmt.Fprintln(os.Stderr, "evolve:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, warehouse string) error {
	if warehouse == "" {
		dir, err := os.MkdirTemp("", "icerun-evolve-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		warehouse = dir
	}
	cat, err := catalogconfig.OpenLocal(ctx, warehouse)
	if err != nil {
		return err
	}
	ident := icetable.Identifier{"shop", "fact_orders_evolve"}
	if err := orderdata.CreateTable(ctx, cat, ident); err != nil {
		return err
	}
	day := time.Date(2025, 3, 14, 0, 0, 0, 0, time.UTC)
	load := func(version string) error {
		w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(version))
		if err != nil {
			return err
		}
		key, err := w.Key("event_date=" + day.Format(time.DateOnly))
		if err != nil {
			return err
		}
		rows := orderdata.Reader(orderdata.Day(day, 3), 16) // the producer's columns: ..., currency, ...
		defer rows.Release()
		res, err := w.ReplacePartition(ctx, key, rows)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: replaced %v, %d rows, ignored input fields %v\n", version, res.Partitions, res.AddedRows, res.Ignored)
		return nil
	}

	if err := load("v1"); err != nil {
		return err
	}
	if err := show(ctx, out, cat, ident, "before the rename"); err != nil {
		return err
	}

	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).RenameColumn([]string{"currency"}, "currency_code").Commit(); err != nil {
		return err
	}
	if _, err := txn.Commit(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "renamed currency -> currency_code")

	if err := load("v2"); err != nil { // rerun of the 2025 partition, producer unchanged
		return err
	}
	return show(ctx, out, cat, ident, "after the rename and rerun")
}

func show(ctx context.Context, out io.Writer, cat catalog.Catalog, ident icetable.Identifier, title string) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "-- %s --\n", title)
	for rec, err := range batches {
		if err != nil {
			return err
		}
		names := make([]string, rec.NumCols())
		for i, f := range rec.Schema().Fields() {
			names[i] = f.Name
		}
		fmt.Fprintln(out, strings.Join(names, " | "))
		for r := 0; r < int(rec.NumRows()); r++ {
			cells := make([]string, rec.NumCols())
			for c, col := range rec.Columns() {
				cells[c] = col.ValueStr(r)
			}
			fmt.Fprintln(out, strings.Join(cells, " | "))
		}
		rec.Release()
	}
	return nil
}
