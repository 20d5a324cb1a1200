package table_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/cputime"
	"github.com/icerun/icerun/table"
)

// BenchmarkMergeOnReadReadSlowdown is the life of a merge-on-read
// partition of 1,000,000 rows: 20 upserts of 10,000 changed rows each
// (every one writes a data file and a delete file), then a compaction.
// It reports what the deletes cost readers, as ratios of a full scan of
// the partition (iceberg-go's, deletes applied) to the scan of the
// freshly written partition, measured in the same run:
//
//   - read-after-20-upserts-x: the scan with 20 upserts' delete files;
//   - read-after-compact-x: the scan once compacted;
//   - upsert-s and compact-s: the mean upsert and the compaction.
//
// One iteration is the whole cycle on a fresh table; run it with
// -benchtime 1x (v2: position delete files, v3: deletion vectors):
//
//	go test ./table -run '^$' -bench BenchmarkMergeOnReadReadSlowdown -benchtime 1x
func BenchmarkMergeOnReadReadSlowdown(b *testing.B) {
	const upserts = 20
	for _, format := range morFormats {
		b.Run("v"+format, func(b *testing.B) {
			ctx := context.Background()
			var base, after, compacted, upsertS, compactS float64
			for b.Loop() {
				cat, ident, w, key := benchDay(b, iceberg.Properties{"format-version": format, table.PropertyUpsertMode: table.ModeMergeOnRead})
				scan := func() float64 { // the fastest of 5 scans: a scan is short, the machine noisy
					best := 0.0
					for i := range 5 {
						start := time.Now()
						if n := scanRows(b, cat, ident); n != upsertBenchRows {
							b.Fatalf("scan: %d rows, want %d", n, upsertBenchRows)
						}
						if d := time.Since(start).Seconds(); i == 0 || d < best {
							best = d
						}
					}
					return best
				}
				base += scan()
				start := time.Now()
				for i := range upserts {
					w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(fmt.Sprint("bench-", i)))
					if err != nil {
						b.Fatal(err)
					}
					changed := make([]orderdata.Order, upsertBenchChanged)
					for j := range changed { // a different 10k spread over the partition each time
						changed[j] = orderdata.At(day0, (j*(upsertBenchRows/upsertBenchChanged)+i*37)%upsertBenchRows, upsertBenchRows)
						changed[j].Amount = int64(1_000_000 + i)
					}
					rows := orderdata.Reader(changed, 8192)
					_, err = w.Upsert(ctx, rows, "order_id")
					rows.Release()
					if err != nil {
						b.Fatal(err)
					}
				}
				upsertS += time.Since(start).Seconds() / upserts
				after += scan()
				start = time.Now()
				res, err := w.Compact(ctx, key)
				if err != nil || res.Unchanged {
					b.Fatalf("Compact = %+v, %v", res, err)
				}
				compactS += time.Since(start).Seconds()
				compacted += scan()
			}
			n := float64(b.N)
			b.ReportMetric(after/base, "read-after-20-upserts-x")
			b.ReportMetric(compacted/base, "read-after-compact-x")
			b.ReportMetric(base/n, "read-fresh-s")
			b.ReportMetric(upsertS/n, "upsert-s")
			b.ReportMetric(compactS/n, "compact-s")
		})
	}
}

// scanRows reads every row of ident with iceberg-go's scan (deletes
// applied) and counts them.
func scanRows(b *testing.B, cat catalog.Catalog, ident icetable.Identifier) int64 {
	b.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		b.Fatal(err)
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for rec, err := range batches {
		if err != nil {
			b.Fatal(err)
		}
		n += rec.NumRows()
		rec.Release()
	}
	return n
}

// BenchmarkRowLineageCost is what keeping row lineage costs on a format
// v3 table of 1,000,000 rows in one partition: each iteration makes a
// copy-on-write upsert of 10,000 changed rows, a merge-on-read upsert of
// 10,000 others and a compaction, twice: once keeping the rows' _row_id
// and _last_updated_sequence_number (as always) and once giving them new
// ids (their lineage neither read nor written), in turn, so that both see
// the same machine. It reports the ratios of their elapsed and CPU times
// (kept over dropped; 1.05 is 5%).
//
//	go test ./table -run '^$' -bench BenchmarkRowLineageCost -benchtime 3x
func BenchmarkRowLineageCost(b *testing.B) {
	ctx := context.Background()
	cat, ident, w, key := benchDay(b, iceberg.Properties{"format-version": "3", table.PropertyUpsertMode: table.ModeMergeOnRead})
	const mor, cow, compact = 0, 1, 2
	var wall, cpu [3][2]time.Duration // step, dropped/kept
	timed := func(step, v int, fn func() error) {
		start, c0 := time.Now(), cputime.Process()
		err := fn()
		wall[step][v] += time.Since(start)
		cpu[step][v] += cputime.Process() - c0
		if err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		for _, kept := range []bool{i%2 == 0, i%2 != 0} {
			*table.DropLineage = !kept
			v := 0
			if kept {
				v = 1
			}
			// copy-on-write first: it folds the deletes the merge-on-read
			// upsert leaves for the compaction
			for _, step := range []int{cow, mor} {
				mode := table.MergeOnRead
				if step == cow {
					mode = table.CopyOnWrite
				}
				i++
				w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(fmt.Sprint("bench-", i)), table.WithWriteMode(mode))
				if err != nil {
					b.Fatal(err)
				}
				changed := make([]orderdata.Order, upsertBenchChanged)
				for j := range changed {
					changed[j] = orderdata.At(day0, (j*(upsertBenchRows/upsertBenchChanged)+i*37)%upsertBenchRows, upsertBenchRows)
					changed[j].Amount = int64(1_000_000 + i)
				}
				rows := orderdata.Reader(changed, 8192)
				timed(step, v, func() error { _, err := w.Upsert(ctx, rows, "order_id"); return err })
				rows.Release()
			}
			timed(compact, v, func() error {
				res, err := w.Compact(ctx, key)
				if err == nil && res.Unchanged {
					err = fmt.Errorf("Compact: Unchanged")
				}
				return err
			})
		}
	}
	*table.DropLineage = false
	for step, name := range []string{"mor-upsert", "cow-upsert", "compact"} {
		b.ReportMetric(float64(wall[step][1])/float64(wall[step][0]), name+"-wall-ratio")
		b.ReportMetric(float64(cpu[step][1])/float64(cpu[step][0]), name+"-cpu-ratio")
	}
}
