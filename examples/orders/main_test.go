package main

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/icerun/icerun/reruntest"
)

func TestOutput(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), t.TempDir(), &out); err != nil {
		t.Fatal(err)
	}
	want := `after landing 1 (without the late event):
  2026-07-14: 5 paid orders, revenue 7500
landing 2: orders: run killed after the staging upsert (late paid event of order 14005 at 2026-07-14 05:10 is staged, the rollup is not)
revenue after the killed run:
  2026-07-14: 5 paid orders, revenue 7500
after the rerun of landing 2:
  2026-07-14: 6 paid orders, revenue 9750
  2026-07-15: 4 paid orders, revenue 5500
after both landings are delivered again:
  2026-07-14: 6 paid orders, revenue 9750
  2026-07-15: 4 paid orders, revenue 5500
from scratch:
  2026-07-14: 6 paid orders, revenue 9750
  2026-07-15: 4 paid orders, revenue 5500
`
	if got := out.String(); got != want {
		t.Errorf("run output =\n%s\nwant\n%s", got, want)
	}
}

var kitTables = []reruntest.Table{
	{Ident: staging, Key: stagingKey},
	{Ident: staging, Key: []string{"event_id"}},
	{Ident: revenue, Key: []string{"event_date"}},
}

// kit checks the run of landing 2 (after landing 1) with the rerun kit.
func kit(t *testing.T, p Pipeline, evolve func(ctx context.Context, cat catalog.Catalog) error) {
	first, second, _ := landings()
	reruntest.Check(t, reruntest.Config{
		Setup: func(ctx context.Context, cat catalog.Catalog) error {
			if err := createTables(ctx, cat); err != nil {
				return err
			}
			if evolve != nil {
				if err := evolve(ctx, cat); err != nil {
					return err
				}
			}
			return p.Run(ctx, cat, reader(first, 4))
		},
		Run: func(ctx context.Context, cat catalog.Catalog) error {
			return p.Run(ctx, cat, reader(second, 4))
		},
		Tables: kitTables,
	})
}

func TestRerunKit(t *testing.T) {
	if testing.Short() {
		t.Skip("the rerun kit over every step of the pipeline: not in -short")
	}
	kit(t, Pipeline{Code: "orders-v1"}, nil)
}

// addChannel adds an optional column to staging_orders, as a new version
// of the destination would.
func addChannel(ctx context.Context, cat catalog.Catalog) error {
	tbl, err := cat.LoadTable(ctx, staging)
	if err != nil {
		return err
	}
	txn := tbl.NewTransaction()
	if err := txn.UpdateSchema(true, false).AddColumn([]string{"channel"}, iceberg.PrimitiveTypes.String, "where the order was placed", false, nil).Commit(); err != nil {
		return err
	}
	_, err = txn.Commit(ctx)
	return err
}

func TestRerunKitAfterSchemaChange(t *testing.T) {
	if testing.Short() {
		t.Skip("the rerun kit over every step of the pipeline: not in -short")
	}
	t.Run("added column", func(t *testing.T) {
		kit(t, Pipeline{Code: "orders-v2"}, addChannel)
	})
	t.Run("added column, key changed to the derived event id", func(t *testing.T) {
		kit(t, Pipeline{Code: "orders-v3", Key: []string{"event_id"}}, addChannel)
	})
}
