package cleanup_test

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
)

// A dry run lists what a crashed writer left behind; Execute removes it.
func ExampleOrphans() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-cleanup")
	defer os.RemoveAll(dir)
	cat, _ := internal.OpenSQLite(ctx, dir)
	_ = cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil)
	spec := orderdata.Spec
	tbl, _ := cat.CreateTable(ctx, icetable.Identifier{"db", "fact_orders"}, orderdata.Schema, catalog.WithPartitionSpec(&spec))

	// A writer killed between writing its data file and committing it.
	data := dir + "/db.db/fact_orders/data"
	_ = os.MkdirAll(data, 0o755)
	_ = os.WriteFile(data+"/crashed.parquet", []byte("PAR1"), 0o644)

	rep, err := cleanup.Orphans(ctx, tbl) // dry run, files older than 6h only
	fmt.Println(len(rep.Orphans), rep.DryRun, err)
	rep, err = cleanup.Orphans(ctx, tbl, cleanup.AnyAge(), cleanup.Execute())
	fmt.Println(len(rep.Orphans), len(rep.Removed), err)
	// Output:
	// 0 true <nil>
	// 1 1 <nil>
}
