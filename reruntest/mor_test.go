package reruntest_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/reruntest"
	"github.com/icerun/icerun/table"
)

var morDay = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// morPipeline upserts changed and new orders merge-on-read, deletes
// others by key, then compacts the day: killed anywhere and rerun, it
// must leave the rows of one clean run.
func morPipeline(ctx context.Context, cat catalog.Catalog) error {
	w, err := table.Open(ctx, cat, orderdata.FactOrders, table.WithCodeVersion("v1"))
	if err != nil {
		return err
	}
	key, err := w.Key("event_date=" + morDay.Format(time.DateOnly))
	if err != nil {
		return err
	}
	changed := orderdata.Day(morDay, 40)[20:40]
	for i := range changed {
		changed[i].Amount = 1_000_000 + int64(i)
	}
	rows := orderdata.Reader(changed, 8)
	defer rows.Release()
	if _, err := w.Upsert(ctx, rows, "order_id"); err != nil {
		return err
	}
	gone := orderdata.Reader(orderdata.Day(morDay, 30)[:5], 8)
	defer gone.Release()
	if _, err := w.Delete(ctx, key, gone, "order_id"); err != nil {
		return err
	}
	_, err = w.Compact(ctx, key)
	return err
}

func TestMergeOnReadRerun(t *testing.T) {
	if testing.Short() {
		t.Skip("the rerun kit over every step: not in -short")
	}
	for _, format := range []string{"2", "3"} {
		t.Run("v"+format, func(t *testing.T) {
			reruntest.Check(t, reruntest.Config{
				Setup: func(ctx context.Context, cat catalog.Catalog) error {
					ns := catalog.NamespaceFromIdent(orderdata.FactOrders)
					if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
						return err
					}
					spec := orderdata.Spec
					_, err := cat.CreateTable(ctx, orderdata.FactOrders, orderdata.Schema, catalog.WithPartitionSpec(&spec),
						catalog.WithProperties(iceberg.Properties{"format-version": format, table.PropertyUpsertMode: table.ModeMergeOnRead}))
					if err != nil {
						return err
					}
					w, err := table.Open(ctx, cat, orderdata.FactOrders)
					if err != nil {
						return err
					}
					key, err := w.Key("event_date=" + morDay.Format(time.DateOnly))
					if err != nil {
						return err
					}
					rows := orderdata.Reader(orderdata.Day(morDay, 30), 8)
					defer rows.Release()
					_, err = w.ReplacePartition(ctx, key, rows)
					return err
				},
				Run:    morPipeline,
				Tables: []reruntest.Table{{Ident: icetable.Identifier(orderdata.FactOrders), Key: []string{"order_id"}}},
				Ks:     []int{0, 2, 4, 7, 11},
			})
		})
	}
}
