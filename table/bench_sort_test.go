package table_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// BenchmarkReplaceSorted is the cost of a table sort order: each
// iteration replaces one partition of ICERUN_SORT_BENCH_ROWS rows (default
// 1M) in an unsorted table and in a table sorted by customer_id (random
// in the input), in turn, with the default writer options (runs of
// DefaultSplitRows rows spilled and merged). It reports both times per
// replace and their ratio from the same run:
//
//	go test ./table -run '^$' -bench BenchmarkReplaceSorted -benchtime 3x
func BenchmarkReplaceSorted(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("ICERUN_SORT_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		rows = n
	}
	byCustomer, err := icetable.NewSortOrder(1, []icetable.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}})
	if err != nil {
		b.Fatal(err)
	}
	cats := map[string]catalog.Catalog{}
	for _, name := range []string{"unsorted", "sorted"} {
		cat, _ := catalogtest.New(b)
		ident := icetable.Identifier{catalogtest.Namespace, name}
		spec := orderdata.Spec
		opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}
		if name == "sorted" {
			opts = append(opts, catalog.WithSortOrder(byCustomer))
		}
		if _, err := cat.CreateTable(context.Background(), ident, orderdata.Schema, opts...); err != nil {
			b.Fatal(err)
		}
		cats[name] = cat
	}
	spent := map[string]time.Duration{}
	i := 0
	for b.Loop() {
		i++
		for _, name := range []string{"unsorted", "sorted"} {
			// a new code version each time, so no run is Unchanged
			w, err := table.Open(context.Background(), cats[name], icetable.Identifier{catalogtest.Namespace, name}, table.WithCodeVersion("bench-"+strconv.Itoa(i)))
			if err != nil {
				b.Fatal(err)
			}
			key, err := w.Key("event_date=2026-07-14")
			if err != nil {
				b.Fatal(err)
			}
			in := orderdata.Stream(day0, rows, 8192)
			start := time.Now()
			if _, err := w.ReplacePartition(context.Background(), key, in); err != nil {
				b.Fatal(err)
			}
			spent[name] += time.Since(start)
			in.Release()
		}
	}
	n := float64(b.N)
	b.ReportMetric(spent["unsorted"].Seconds()/n, "unsorted-s/op")
	b.ReportMetric(spent["sorted"].Seconds()/n, "sorted-s/op")
	b.ReportMetric(spent["sorted"].Seconds()/spent["unsorted"].Seconds(), "sorted/unsorted")
}
