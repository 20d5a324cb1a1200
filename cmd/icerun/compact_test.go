package main

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/table"
)

func TestCompactCommand(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	cat, err := internal.OpenSQLite(ctx, wh)
	require.NoError(t, err)
	ident := icetable.Identifier{"db", "fact_orders"}
	require.NoError(t, cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(ident), nil))
	spec := orderdata.Spec
	_, err = cat.CreateTable(ctx, ident, orderdata.Schema, catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	require.NoError(t, err)
	w, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	key, err := w.Key("event_date=2026-07-14")
	require.NoError(t, err)
	rows := orderdata.Reader(orderdata.Day(day, 40), 8)
	_, err = w.ReplacePartition(ctx, key, rows)
	rows.Release()
	require.NoError(t, err)
	gone := orderdata.Reader(orderdata.Day(day, 40)[:4], 8)
	_, err = w.Delete(ctx, key, gone, "order_id")
	gone.Release()
	require.NoError(t, err)

	common := []string{"-warehouse", wh, "-table", "db.fact_orders"}
	code, out, errs := icerun(append([]string{"compact"}, append(common, "-key", "event_date=2026-07-14")...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+36 rows", "compact of a partition with 4 of 40 rows deleted")
	code, out, errs = icerun(append([]string{"compact"}, append(common, "-all")...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "compacted 0 partitions")
	code, _, _ = icerun(append([]string{"compact"}, common...)...)
	require.NotEqual(t, 0, code, "compact without -key, -all or -manifests")

	// Small commits of iceberg-go's own Append leave a manifest each;
	// -manifests folds them into one, and finds nothing to do next time.
	for i := range 9 {
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		rdr := orderdata.Reader(orderdata.Day(day.AddDate(0, 0, 1+i), 3), 8)
		txn := tbl.NewTransaction()
		require.NoError(t, txn.Append(ctx, rdr, nil))
		rdr.Release()
		_, err = txn.Commit(ctx)
		require.NoError(t, err)
	}
	code, out, errs = icerun(append([]string{"compact"}, append(common, "-manifests")...)...)
	require.Equal(t, 0, code, errs)
	require.Regexp(t, `manifests: 1\d rewritten into 1 \(snapshot \d+\)`, out)
	code, out, errs = icerun(append([]string{"compact"}, append(common, "-manifests")...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "manifests: nothing to rewrite")
}
