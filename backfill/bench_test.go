package backfill_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// benchSize is the backfill benchmark's partitions and rows per partition:
// 100 x 2,000 by default, ICERUN_BACKFILL_PARTS and ICERUN_BACKFILL_ROWS
// to run the 400 x 10,000.
func benchSize() (parts, rows int) {
	parts, rows = 100, 2000
	if n, err := strconv.Atoi(os.Getenv("ICERUN_BACKFILL_PARTS")); err == nil {
		parts = n
	}
	if n, err := strconv.Atoi(os.Getenv("ICERUN_BACKFILL_ROWS")); err == nil {
		rows = n
	}
	return parts, rows
}

// BenchmarkBackfill loads the same daily partitions with the raw
// iceberg-go loop (one Transaction.Overwrite with a partition filter and
// one commit per partition, no maintenance) and with backfill.Run. It
// reports the time per run, the cost of the last 10 commits over the first
// 10 (1.0 is linear), and the live manifests and metadata bytes left.
func BenchmarkBackfill(b *testing.B) {
	parts, rows := benchSize()
	b.Run("raw-iceberg-go", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cat, _ := catalogtest.New(b)
			ident := catalogtest.CreateTable(b, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
			tbl, err := cat.LoadTable(context.Background(), ident)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			var laps []time.Duration
			for p := range parts {
				d := first.AddDate(0, 0, p)
				start := time.Now()
				rdr := orderdata.Stream(d, rows, 8192)
				txn := tbl.NewTransaction()
				filter := iceberg.EqualTo(iceberg.Reference("event_date"), iceberg.Date(int32(d.Unix()/86400)))
				if err := txn.Overwrite(context.Background(), rdr, nil, icetable.WithOverwriteFilter(filter)); err != nil {
					b.Fatal(err)
				}
				if tbl, err = txn.Commit(context.Background()); err != nil {
					b.Fatal(err)
				}
				rdr.Release()
				laps = append(laps, time.Since(start))
			}
			b.StopTimer()
			report(b, tbl, laps)
			b.StartTimer()
		}
	})
	for _, tc := range []struct {
		name string
		opts []backfill.Option
	}{
		{"icerun-1-per-snapshot-1-worker", []backfill.Option{backfill.WithWorkers(1)}},
		{"icerun-1-per-snapshot", []backfill.Option{backfill.WithWorkers(2)}},
		{"icerun-1-per-snapshot-keep-8", []backfill.Option{backfill.WithWorkers(2), keep8}},
		{"icerun-8-per-snapshot", []backfill.Option{backfill.WithWorkers(2), backfill.WithKeysPerSnapshot(8)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				cat, _ := catalogtest.New(b)
				ident := catalogtest.CreateTable(b, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
				w, err := table.Open(context.Background(), cat, ident)
				if err != nil {
					b.Fatal(err)
				}
				ks := benchKeys(b, w, parts)
				job := func(_ context.Context, k partition.Key) (array.RecordReader, error) {
					return orderdata.Stream(dayOf(k), rows, 8192), nil
				}
				var laps []time.Duration
				last := time.Now()
				progress := func(backfill.Progress) {
					now := time.Now()
					laps = append(laps, now.Sub(last))
					last = now
				}
				b.StartTimer()
				last = time.Now()
				if _, err := backfill.Run(context.Background(), w, ks, job, append(tc.opts, backfill.WithProgress(progress))...); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				tbl, err := w.Refresh(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				report(b, tbl, laps)
				b.StartTimer()
			}
		})
	}
}

// keep8 expires snapshots during the run, keeping the last 8 (lineage is
// kept in the checkpoint): the metadata.json every commit parses stays
// bounded.
var keep8 = backfill.WithHygiene(backfill.Hygiene{KeepSnapshots: 8, PreviousVersionsMax: backfill.DefaultHygiene.PreviousVersionsMax})

func median(laps []time.Duration) time.Duration {
	s := slices.Clone(laps)
	slices.Sort(s)
	return s[len(s)/2]
}

func benchKeys(b *testing.B, w *table.Writer, n int) []partition.Key {
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		b.Fatal(err)
	}
	end, err := w.Key("event_date=" + first.AddDate(0, 0, n-1).Format(time.DateOnly))
	if err != nil {
		b.Fatal(err)
	}
	ks, err := spec.Last(end, n)
	if err != nil {
		b.Fatal(err)
	}
	return ks
}

// report adds the linearity and metadata figures of one run.
func report(b *testing.B, tbl *icetable.Table, laps []time.Duration) {
	if len(laps) >= 20 {
		var a, z time.Duration
		for i := range 10 {
			a += laps[i]
			z += laps[len(laps)-1-i]
		}
		b.ReportMetric(float64(z)/float64(a), "last10/first10")
		if len(laps) >= 100 {
			// The same with the median lap of 50: robust to the odd slow
			// lap (a GC, an expiry, two workers finishing together).
			b.ReportMetric(float64(median(laps[len(laps)-50:]))/float64(median(laps[:50])), "last50/first50-median")
		}
		b.ReportMetric(float64(a.Milliseconds())/10, "ms/first-commit")
		b.ReportMetric(float64(z.Milliseconds())/10, "ms/last-commit")
	}
	st, err := backfill.Measure(context.Background(), tbl)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Manifests), "manifests")
	b.ReportMetric(float64(st.Snapshots), "snapshots")
	b.ReportMetric(float64(st.MetadataBytes)/1e6, "metadata-MB")
	b.ReportMetric(float64(st.CurrentJSON)/1e3, "metadata.json-kB")
}
