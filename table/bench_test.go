package table_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/cputime"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/table"
)

const benchRows = 200_000

// BenchmarkReplace runs icerun's ReplacePartition and iceberg-go's own
// Transaction.Overwrite with a partition filter side by side, on the same
// generated rows. Compare the two with benchstat or by their rows/s; the
// cmd/icerun-bench command prints the same comparison with peak RSS at
// 1M and 5M rows.
func BenchmarkReplace(b *testing.B) {
	b.Run("raw-iceberg-go", func(b *testing.B) {
		cat, ident, _ := benchTable(b)
		filter := iceberg.EqualTo(iceberg.Reference("event_date"), iceberg.Date(int32(day0.Unix()/86400)))
		cpu := cputime.Process()
		for b.Loop() {
			tbl, err := cat.LoadTable(context.Background(), ident)
			if err != nil {
				b.Fatal(err)
			}
			rows := orderdata.Stream(day0, benchRows, 8192)
			txn := tbl.NewTransaction()
			if err := txn.Overwrite(context.Background(), rows, nil, icetable.WithOverwriteFilter(filter)); err != nil {
				b.Fatal(err)
			}
			if _, err := txn.Commit(context.Background()); err != nil {
				b.Fatal(err)
			}
			rows.Release()
		}
		reportRows(b, cpu)
	})
	for _, writers := range []int{1, 2} {
		b.Run("icerun-writers-"+string(rune('0'+writers)), func(b *testing.B) {
			cat, ident, _ := benchTable(b)
			w, err := table.Open(context.Background(), cat, ident, table.WithParallelWrite(writers, benchRows/int64(writers)))
			if err != nil {
				b.Fatal(err)
			}
			key, err := w.Key("event_date=2026-07-14")
			if err != nil {
				b.Fatal(err)
			}
			i := 0
			cpu := cputime.Process()
			for b.Loop() {
				i++ // a new code version each time, so no run is Unchanged
				w, _ := table.Open(context.Background(), cat, ident, table.WithParallelWrite(writers, benchRows/int64(writers)), table.WithCodeVersion(string(rune('a'+i%26))+"-bench"))
				rows := orderdata.Stream(day0, benchRows, 8192)
				if _, err := w.ReplacePartition(context.Background(), key, rows); err != nil {
					b.Fatal(err)
				}
				rows.Release()
			}
			reportRows(b, cpu)
		})
	}
}

// BenchmarkReplaceFingerprint is the input fingerprint's share of
// BenchmarkReplace: the same rows, resolved to the table's layout, only
// fingerprinted (the fingerprint of every replace; see
// internal/fingerprint). Compare its cpu-ns/row with BenchmarkReplace's
// (the CPU time per row, steadier than elapsed time on a shared machine).
func BenchmarkReplaceFingerprint(b *testing.B) {
	rows := orderdata.Stream(day0, benchRows, 8192)
	var recs []arrow.RecordBatch
	for rows.Next() {
		rec := rows.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	rows.Release()
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	cpu := cputime.Process()
	for b.Loop() {
		var s fingerprint.Sum
		for _, r := range recs {
			s.Add(r)
		}
	}
	reportRows(b, cpu)
}

// BenchmarkReplaceFingerprintCost is the fingerprint's cost in a replace:
// each iteration replaces the partition twice, once with the rows
// fingerprinted (as always) and once with them only counted, in turn, so
// that both see the same machine. It reports the ratios of their elapsed
// and CPU times (hashed over counted; 1.03 is 3%), with the writers'
// default parallelism.
func BenchmarkReplaceFingerprintCost(b *testing.B) {
	cat, ident, _ := benchTable(b)
	w, err := table.Open(context.Background(), cat, ident)
	if err != nil {
		b.Fatal(err)
	}
	key, err := w.Key("event_date=2026-07-14")
	if err != nil {
		b.Fatal(err)
	}
	var wall, cpu [2]time.Duration // counted, hashed
	i := 0
	for b.Loop() {
		for _, hashed := range []bool{i%2 == 0, i%2 != 0} {
			i++ // a new code version each time, so no run is Unchanged
			*table.CountOnly = !hashed
			w, _ := table.Open(context.Background(), cat, ident, table.WithCodeVersion(fmt.Sprint(i)))
			rows := orderdata.Stream(day0, benchRows, 8192)
			start, c0 := time.Now(), cputime.Process()
			if _, err := w.ReplacePartition(context.Background(), key, rows); err != nil {
				b.Fatal(err)
			}
			v := 0
			if hashed {
				v = 1
			}
			wall[v] += time.Since(start)
			cpu[v] += cputime.Process() - c0
			rows.Release()
		}
	}
	*table.CountOnly = false
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "wall-ratio")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-ratio")
}

// reportRows reports the rows per second and the CPU time per row of the
// process since cpu (a processCPU value taken before the loop).
func reportRows(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(cputime.Process()-cpu)/float64(benchRows*b.N), "cpu-ns/row")
}

func benchTable(b *testing.B) (cat catalog.Catalog, ident icetable.Identifier, dir string) {
	cat, dir = catalogtest.New(b)
	ident = catalogtest.CreateTable(b, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	return cat, ident, dir
}
