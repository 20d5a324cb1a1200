package main

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// Dropping the example's table purges its files: a rerun leaves no orphan
// behind (it left 651 when the table was only dropped).
func TestPurgeLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	require.NoError(t, err)
	ident := icetable.Identifier{"examples", "backfill_orders"}
	files := func() int {
		n := 0
		require.NoError(t, filepath.WalkDir(filepath.Join(dir, "examples.db"), func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		}))
		return n
	}
	for range 2 {
		require.NoError(t, purge(ctx, cat, ident, table.LateTable(ident)))
		require.NoError(t, orderdata.CreateTable(ctx, cat, ident))
		w, err := table.Open(ctx, cat, ident)
		require.NoError(t, err)
		d := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
		key, err := w.Key("event_date=2026-07-14")
		require.NoError(t, err)
		rows := orderdata.Reader(orderdata.Day(d, 10), 5)
		_, err = w.ReplacePartition(ctx, key, rows)
		rows.Release()
		require.NoError(t, err)
		require.Positive(t, files())
	}
	require.NoError(t, purge(ctx, cat, ident, table.LateTable(ident)))
	require.Zero(t, files(), "every file of the dropped table is gone")
}
