package main

import (
	"context"
	"path/filepath"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal"
)

// mainSnapshot is the current snapshot id of db.fact_orders in wh (0: none).
func mainSnapshot(t *testing.T, wh string) int64 {
	t.Helper()
	cat, err := internal.OpenSQLite(context.Background(), wh)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), icetable.Identifier{"db", "fact_orders"})
	require.NoError(t, err)
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}

func TestReplaceBranchThenPublish(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "a.parquet"), day, 40)
	parquetFile(t, filepath.Join(in, "b.parquet"), day, 25)
	common := []string{"-warehouse", wh, "-table", "db.fact_orders"}
	replace := func(file string, more ...string) {
		t.Helper()
		args := append(append([]string{"replace"}, common...), append([]string{"-key", "event_date=2026-07-14", "-file", filepath.Join(in, file)}, more...)...)
		code, _, errs := icerun(args...)
		require.Equal(t, 0, code, errs)
	}
	replace("a.parquet")
	before := mainSnapshot(t, wh)

	replace("b.parquet", "-branch", "audit")
	require.Equal(t, before, mainSnapshot(t, wh), "replace -branch must leave main as it was")

	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"no branch", []string{"publish", "-warehouse", wh, "db.fact_orders"}, 2, "-branch is required"},
		{"two tables", []string{"publish", "-warehouse", wh, "db.fact_orders", "-branch", "audit", "db.other"}, 2, "unexpected argument"},
		{"no such branch", []string{"publish", "-warehouse", wh, "db.fact_orders", "-branch", "nope"}, 64, "no such branch"},
		{"publish", []string{"publish", "-warehouse", wh, "db.fact_orders", "-branch", "audit"}, 0, "fast-forward"},
		{"again", []string{"publish", "-warehouse", wh, "-table", "db.fact_orders", "-branch", "audit"}, 0, "already published"},
	}
	for _, tt := range tests {
		code, out, errs := icerun(tt.args...)
		require.Equal(t, tt.code, code, "%s: %s%s", tt.name, out, errs)
		require.Contains(t, out+errs, tt.contains, tt.name)
	}
	require.NotEqual(t, before, mainSnapshot(t, wh), "publish moves main")
}
