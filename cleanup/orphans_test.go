package cleanup_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

func paths(fs []cleanup.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, strings.TrimPrefix(f.Path, "file://"))
	}
	return out
}

func TestOrphans(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	w, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	k, err := w.Key("event_date=2026-07-14")
	require.NoError(t, err)
	rows := orderdata.Reader(orderdata.Day(day, 20), 10)
	_, err = w.ReplacePartition(ctx, k, rows)
	rows.Release()
	require.NoError(t, err)
	live := catalogtest.DataFiles(t, dir)
	scan := catalogtest.CanonicalScan(t, cat, ident)

	data := filepath.Join(dir, "db.db", "fact_orders", "data", "event_date=2026-07-14")
	old, young := filepath.Join(data, "crashed-writer.parquet"), filepath.Join(data, "running-writer.parquet")
	require.NoError(t, os.WriteFile(old, []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(young, []byte("y"), 0o644))
	long := time.Now().Add(-7 * time.Hour)
	require.NoError(t, os.Chtimes(old, long, long))
	for _, f := range live { // live files are old too: age alone must not make them orphans
		require.NoError(t, os.Chtimes(f, long, long))
	}
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)

	rep, err := cleanup.Orphans(ctx, tbl)
	require.NoError(t, err)
	assert.True(t, rep.DryRun)
	assert.Equal(t, []string{old}, paths(rep.Orphans), "Orphans(default) = got, want only the file older than DefaultMinAge")
	assert.Empty(t, rep.Removed, "a dry run removed files")
	assert.FileExists(t, old)

	rep, err = cleanup.Orphans(ctx, tbl, cleanup.AnyAge())
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{old, young}, paths(rep.Orphans))

	rep, err = cleanup.Orphans(ctx, tbl, cleanup.MinAge(time.Hour), cleanup.Execute())
	require.NoError(t, err)
	assert.False(t, rep.DryRun)
	assert.Len(t, rep.Removed, 1)
	assert.NoFileExists(t, old)
	assert.FileExists(t, young, "a file younger than the minimum age was removed")
	for _, f := range live {
		assert.FileExists(t, f, "a referenced file was removed")
	}
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident))
}

func TestOrphansBadOption(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	for _, d := range []time.Duration{0, -time.Hour} {
		_, err := cleanup.Orphans(context.Background(), tbl, cleanup.MinAge(d))
		assert.ErrorIs(t, err, cleanup.ErrBadOption, "MinAge(%v)", d)
	}
}
