package table_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// Open a writer on the embedded default catalog, from any program.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(dir, "warehouse"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := orderdata.CreateTable(ctx, cat, orderdata.FactOrders); err != nil { // your own CreateTable, or icerun create
		fmt.Println(err)
		return
	}
	w, err := table.Open(ctx, cat, orderdata.FactOrders, table.WithCodeVersion("v1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := w.Key("event_date=2026-07-14")
	fmt.Println(key, err)
	// Output: event_date=2026-07-14 <nil>
}

// A service that imports icerun logs every commit attempt and outcome
// with slog, and traces with the OpenTelemetry provider it installs (an
// in-memory one here; metrics go through otel.SetMeterProvider the same
// way). Without a provider both are no-ops.
func ExampleWithLogger() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	spans := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans)))
	// Volatile attributes are dropped so that the output is stable.
	drop := map[string]bool{"time": true, "duration": true, "snapshot": true, "bytes": true}
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if drop[a.Key] {
			return slog.Attr{}
		}
		return a
	}}))
	w, err := table.Open(ctx, cat, ident, table.WithLogger(logger))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, _ := w.Key("event_date=2026-07-14")
	rows := orderdata.Reader(orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 10), 5)
	defer rows.Release()
	if _, err := w.ReplacePartition(ctx, key, rows); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.GetSpans() {
		fmt.Println("span", s.Name)
	}
	otel.SetTracerProvider(noop.NewTracerProvider())
	// Output:
	// level=INFO msg="icerun replace" table=shop.fact_orders op="table: replace shop.fact_orders/event_date=2026-07-14" outcome=committed partitions="[event_date=2026-07-14]" attempts=1 added_rows=10 deleted_rows=0 added_files=1 deleted_files=0
	// span icerun.commit
	// span icerun.replace
}
