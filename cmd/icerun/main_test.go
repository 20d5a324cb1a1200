package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
)

var day = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// warehouse makes a warehouse with db.fact_orders and returns its folder.
func warehouse(t *testing.T) string {
	dir := t.TempDir()
	cat, err := internal.OpenSQLite(context.Background(), dir)
	require.NoError(t, err)
	require.NoError(t, orderdata.CreateTable(context.Background(), cat, icetable.Identifier{"db", "fact_orders"}))
	return dir
}

// parquetFile writes n orders of day d to path.
func parquetFile(t *testing.T, path string, d time.Time, n int) {
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(d, n))
	defer rec.Release()
	tbl := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer tbl.Release()
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()))
}

func icerun(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestCommands(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "one.parquet"), day, 40)
	common := []string{"-warehouse", wh, "-table", "db.fact_orders", "-code-version", "v1"}

	code, out, errs := icerun(append([]string{"replace"}, append(common, "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "one.parquet"))...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+40 rows")

	code, out, errs = icerun(append([]string{"plan"}, append(common, "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "one.parquet"))...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "delete")
	require.Contains(t, out, "(40 rows)")

	for i := range 3 {
		d := day.AddDate(0, 0, -i)
		parquetFile(t, filepath.Join(in, "byday", "event_date="+d.Format(time.DateOnly), "part-0.parquet"), d, 10+i)
	}
	code, out, errs = icerun(append([]string{"backfill"}, append(common, "-dir", filepath.Join(in, "byday"), "-from", "event_date=2026-07-12", "-to", "event_date=2026-07-14", "-workers", "2", "-order", "reverse")...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 keys: 3 written, 0 unchanged, 0 skipped", "07-14 was written by replace without an input identity: it runs")
	require.Contains(t, errs, "backfill: 3/3 keys", "log lines when stderr is not a terminal")
	code, out, errs = icerun(append([]string{"backfill"}, append(common, "-dir", filepath.Join(in, "byday"), "-from", "event_date=2026-07-12", "-to", "event_date=2026-07-14", "-redo")...)...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 keys: 0 written, 3 unchanged, 0 skipped")

	code, out, errs = icerun("history", "-warehouse", wh, "-table", "db.fact_orders", "event_date=2026-07-14")
	require.Equal(t, 0, code, errs)
	require.Equal(t, 3, strings.Count(out, "\n"), "header and two writes: %s", out)
	require.Contains(t, out, "v1")
}

func TestBadInput(t *testing.T) {
	wh := warehouse(t)
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"frobnicate"}, 2},
		{[]string{"replace", "-nope"}, 2},
		{[]string{"replace", "-warehouse", wh, "-table", "db.fact_orders"}, 2},
		{[]string{"history", "-warehouse", wh, "-table", "fact_orders", "event_date=2026-07-14"}, 2},
		{[]string{"history", "-warehouse", wh, "-table", "db.fact_orders", "event_date=2026-13-01"}, 64},
		{[]string{"history", "-warehouse", wh, "-table", "db.missing", "event_date=2026-07-14"}, 64},
		{[]string{"backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", wh, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-01"}, 64},
		{[]string{"backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", wh, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-14", "-order", "sideways"}, 2},
		{[]string{"backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", wh, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-14", "-keep-snapshots", "-1"}, 2},
		{[]string{"replace", "-warehouse", wh, "-table", "db.fact_orders", "-key", "event_date=2026-07-14", "-file", "/nonexistent.parquet"}, 65},
	}
	for _, tc := range tests {
		code, _, errs := icerun(tc.args...)
		if code != tc.code || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "icerun") {
			t.Errorf("icerun %v = exit %d, stderr %q; want exit %d and one line", tc.args, code, errs, tc.code)
		}
	}
}

// A corrected day's input runs again under the same code version; the
// others stay skipped.
func TestBackfillNoticesCorrectedInput(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	for i := range 3 {
		d := day.AddDate(0, 0, -i)
		parquetFile(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "part-0.parquet"), d, 10+i)
	}
	args := []string{"backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", in, "-from", "event_date=2026-07-12", "-to", "event_date=2026-07-14"}
	code, out, errs := icerun(args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 keys: 3 written")
	code, out, errs = icerun(args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 keys: 0 written, 0 unchanged, 3 skipped")

	parquetFile(t, filepath.Join(in, "event_date=2026-07-13", "part-0.parquet"), day.AddDate(0, 0, -1), 25) // corrected
	code, out, errs = icerun(args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 keys: 1 written, 0 unchanged, 2 skipped")

	// -keep-snapshots expires after a run that committed nothing, to exactly N.
	code, out, errs = icerun(append(args, "-keep-snapshots", "1")...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 skipped")
	code, out, errs = icerun("describe", "-warehouse", wh, "db.fact_orders")
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "snapshots: 1\n")

	code, _, errs = icerun("backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", filepath.Join(in, "missing"), "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-14", "-redo")
	require.Equal(t, 65, code, "a missing input folder is bad input")
	require.Contains(t, errs, "-dir")
}
