package backfill_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// A 10-day backfill in reverse with 4 workers, interrupted by nothing;
// run again by the same code version, it skips every day.
func ExampleRun() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir) // the embedded default catalog
	if err != nil {
		panic(err)
	}
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("orders-v1"))
	if err != nil {
		panic(err)
	}
	spec, _ := partition.NewSpec(w.Table().Spec(), w.Table().Schema())
	from, _ := w.Key("event_date=2026-07-05")
	to, _ := w.Key("event_date=2026-07-14")
	keys, err := spec.Range(from, to)
	if err != nil {
		panic(err)
	}
	// The job: a function of the key only.
	job := func(_ context.Context, k partition.Key) (array.RecordReader, error) {
		d, err := time.Parse("event_date=2006-01-02", k.String())
		if err != nil {
			return nil, err
		}
		return orderdata.Reader(orderdata.Day(d, 100), 64), nil
	}
	for range 2 {
		rep, err := backfill.Run(ctx, w, keys, job, backfill.WithWorkers(4), backfill.WithOrder(backfill.Reverse))
		if err != nil {
			panic(err)
		}
		fmt.Println("written", rep.Written, "skipped", rep.Skipped, "rows", rep.Rows, "manifests", rep.After.Manifests)
	}
	// Output:
	// written 10 skipped 0 rows 1000 manifests 3
	// written 0 skipped 10 rows 0 manifests 3
}
