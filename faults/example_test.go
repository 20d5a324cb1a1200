package faults_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/table"
)

// Count the operations of a replacement on one table, then fail the
// catalog commit (the last operation) of the same replacement on another:
// nothing is committed.
func ExampleWrapCatalog() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-faults")
	defer os.RemoveAll(dir)
	cat, _ := internal.OpenSQLite(ctx, dir)
	_ = cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil)
	spec := orderdata.Spec
	counted, ident := icetable.Identifier{"db", "counted"}, icetable.Identifier{"db", "fact_orders"}
	_, _ = cat.CreateTable(ctx, counted, orderdata.Schema, catalog.WithPartitionSpec(&spec))
	_, _ = cat.CreateTable(ctx, ident, orderdata.Schema, catalog.WithPartitionSpec(&spec))
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

	run := func(in *faults.Injector, ident icetable.Identifier) error {
		w, err := table.Open(ctx, faults.WrapCatalog(cat, in), ident, table.WithParallelWrite(1, 1<<20))
		if err != nil {
			return err
		}
		k, _ := w.Key("event_date=" + day.Format("2006-01-02"))
		rows := orderdata.Reader(orderdata.Day(day, 10), 10)
		defer rows.Release()
		_, err = w.ReplacePartition(ctx, k, rows)
		return err
	}
	counter := faults.New(faults.Fail, 0) // k = 0: count only
	fmt.Println(run(counter, counted))
	ops := counter.Ops()
	commitAt := len(ops) // the commit is the last operation
	fmt.Println(ops[commitAt-1][:len("catalog.commit")])

	in := faults.New(faults.Fail, commitAt)
	err := run(in, ident)
	fmt.Println(errors.Is(err, faults.ErrInjected))
	tbl, _ := cat.LoadTable(ctx, ident)
	fmt.Println(tbl.CurrentSnapshot() == nil)
	// Output:
	// <nil>
	// catalog.commit
	// true
	// true
}
