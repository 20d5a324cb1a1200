package table_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

const (
	upsertBenchRows    = 1_000_000
	upsertBenchChanged = 10_000
)

// BenchmarkUpsert upserts 10,000 changed rows into a partition of
// 1,000,000 rows, beside a full ReplacePartition of the same partition,
// in the same run. peak-heap-MB is the highest live Go heap (Arrow buffers
// included: they use the Go allocator) sampled every 2 ms during the
// measured calls, after a GC. Run it with -benchtime 3x or so:
//
//	go test ./table -run '^$' -bench BenchmarkUpsert -benchtime 3x
func BenchmarkUpsert(b *testing.B) {
	for _, mode := range []string{"replace-partition", "upsert-10k"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			cat, ident, _, key := benchDay(b, nil)
			runtime.GC()
			peak := startPeak()
			i := 0
			for b.Loop() {
				i++
				w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(fmt.Sprint("bench-", i)))
				if err != nil {
					b.Fatal(err)
				}
				switch mode {
				case "replace-partition":
					rows := orderdata.Stream(day0, upsertBenchRows, 8192)
					_, err = w.ReplacePartition(ctx, key, rows)
					rows.Release()
				case "upsert-10k":
					changed := make([]orderdata.Order, upsertBenchChanged)
					for j := range changed {
						changed[j] = orderdata.At(day0, j*(upsertBenchRows/upsertBenchChanged), upsertBenchRows)
						changed[j].Amount = int64(1_000_000 + i)
					}
					rows := orderdata.Reader(changed, 8192)
					r, uerr := w.Upsert(ctx, rows, "order_id")
					rows.Release()
					err = uerr
					if err == nil && r.AddedRows != upsertBenchRows {
						b.Fatalf("Upsert: partition holds %d rows, want %d", r.AddedRows, upsertBenchRows)
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(peak()/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/op")
		})
	}
}

// startPeak samples the live heap until the returned function is called,
// which returns the highest value seen, in bytes.
func startPeak() func() float64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var (
		mu   sync.Mutex
		max  uint64
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			mu.Lock()
			if v := sample[0].Value.Uint64(); v > max {
				max = v
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return float64(max)
	}
}

// benchDay creates an orders table with props whose partition
// event_date=2026-07-14 holds upsertBenchRows rows, and returns its
// catalog, identifier, a writer and that key.
func benchDay(b *testing.B, props iceberg.Properties) (catalog.Catalog, icetable.Identifier, *table.Writer, partition.Key) {
	b.Helper()
	ctx := context.Background()
	cat, _ := catalogtest.New(b)
	ident := catalogtest.CreateTable(b, cat, "fact_orders", orderdata.Schema, orderdata.Spec, props)
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("setup"))
	if err != nil {
		b.Fatal(err)
	}
	key, err := w.Key("event_date=2026-07-14")
	if err != nil {
		b.Fatal(err)
	}
	rows := orderdata.Stream(day0, upsertBenchRows, 8192)
	defer rows.Release()
	if _, err := w.ReplacePartition(ctx, key, rows); err != nil {
		b.Fatal(err)
	}
	return cat, ident, w, key
}
