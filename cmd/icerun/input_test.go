package main

import (
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

// writeBatches writes recs to one Parquet file at path.
func writeBatches(t *testing.T, path string, recs ...arrow.RecordBatch) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := pqarrow.NewFileWriter(recs[0].Schema(), f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
}

// tableRows reads every row of db.fact_orders-like table ident of wh.
func tableRows(t *testing.T, wh string, ident icetable.Identifier) arrow.Table {
	t.Helper()
	cat, err := internal.OpenSQLite(context.Background(), wh)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	out, err := tbl.Scan().ToArrowTable(context.Background())
	require.NoError(t, err)
	t.Cleanup(out.Release)
	return out
}

// A shell glob hands replace several files after the table: every one is
// read, flags after them still count, and the partition holds all rows.
func TestReplaceReadsEveryFileOfAGlob(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	var files []string
	for i, n := range []int{10, 20, 30} {
		p := filepath.Join(in, "split", "part-"+string(rune('a'+i))+".parquet")
		rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 60)[i*10:i*10+n])
		writeBatches(t, p, rec)
		rec.Release()
		files = append(files, p)
	}
	args := append([]string{"replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", "-file"}, files...)
	args = append(args, "-code-version", "v1")
	code, out, errs := icerun(args...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+60 rows", "every file of the glob is read: %s", out)
	require.EqualValues(t, 60, tableRows(t, wh, icetable.Identifier{"db", "fact_orders"}).NumRows())
	code, out, errs = icerun(append([]string{"history", "db.fact_orders", "-warehouse", wh}, "event_date=2026-07-14")...)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "v1", "-code-version after the files is parsed, not ignored")
}

// An argument a command does not use is refused with exit 2, never
// ignored: every command is tried with one argument too many.
func TestEveryCommandRefusesUnusedArguments(t *testing.T) {
	wh := warehouse(t)
	extra := map[string][]string{
		"history": {"db.fact_orders", "event_date=2026-07-14", "extra"},
		"list":    {"db", "extra"},
		"version": {"extra"},
	}
	for _, c := range commands {
		args, ok := extra[c.name]
		switch {
		case ok:
		case c.name == "replace" || c.name == "plan" || c.name == "upsert" || c.name == "window":
			continue // the names after the table are input files (TestReplaceReadsEveryFileOfAGlob)
		default:
			args = []string{"db.fact_orders", "extra"}
		}
		code, _, errs := icerun(append(append([]string{c.name}, args...), "-warehouse", wh)...)
		if c.name == "version" {
			code, _, errs = icerun(c.name, "extra")
		}
		if code != exitUsage || !strings.Contains(unquoted(errs), `"extra"`) {
			t.Errorf("icerun %s %v = exit %d, %q; want exit 2 naming the argument", c.name, args, code, errs)
		}
	}
	// A file after the table that is not there is an error, not ignored.
	code, _, errs := icerun("replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", "/nope/a.parquet")
	require.Equal(t, exitData, code, errs)
}

// The row outside the key is named by its file and its place in that
// file, not its place in a read batch of 8,192 rows.
func TestRowOutsideNamesFileAndRow(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	good := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 100))
	writeBatches(t, filepath.Join(in, "a.parquet"), good)
	good.Release()
	many := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 9000))
	bad := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day.AddDate(0, 0, 1), 1))
	writeBatches(t, filepath.Join(in, "b.parquet"), many, bad)
	many.Release()
	bad.Release()
	for _, cmd := range []string{"replace", "plan"} {
		code, _, errs := icerun(cmd, "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", filepath.Join(in, "a.parquet"), filepath.Join(in, "b.parquet"))
		require.Equal(t, exitData, code, errs)
		require.Contains(t, errs, "row 9001 of "+filepath.Join(in, "b.parquet"), "%s: the 9,001st row of b.parquet (batch row 808)", cmd)
	}
	// backfill names it too (one key per snapshot).
	dayDir := filepath.Join(in, "byday", "event_date=2026-07-14")
	require.NoError(t, os.MkdirAll(dayDir, 0o755))
	require.NoError(t, os.Rename(filepath.Join(in, "b.parquet"), filepath.Join(dayDir, "b.parquet")))
	code, _, errs := icerun("backfill", "db.fact_orders", "-warehouse", wh, "-dir", filepath.Join(in, "byday"), "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-14")
	require.Equal(t, exitData, code, errs)
	require.Contains(t, errs, "row 9001 of "+filepath.Join(dayDir, "b.parquet"))
	// and with several keys per snapshot, where the group's check of each
	// job finds it (the day before holds good rows).
	prevDir := filepath.Join(in, "byday", "event_date=2026-07-13")
	require.NoError(t, os.MkdirAll(prevDir, 0o755))
	prev := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day.AddDate(0, 0, -1), 50))
	writeBatches(t, filepath.Join(prevDir, "a.parquet"), prev)
	prev.Release()
	code, _, errs = icerun("backfill", "db.fact_orders", "-warehouse", wh, "-dir", filepath.Join(in, "byday"), "-from", "event_date=2026-07-13", "-to", "event_date=2026-07-14", "-keys-per-snapshot", "2")
	require.Equal(t, exitData, code, errs)
	require.Contains(t, errs, "row 9001 of "+filepath.Join(dayDir, "b.parquet"))
}

// A Hive folder names a table column the files lack (DuckDB's
// PARTITION_BY leaves it out): it is filled from the folder, and said
// so, also when it is not the partition source (here the table is
// partitioned by days(event_ts) and the folder is event_date=...).
func TestHiveFolderColumnFilled(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	in := filepath.Join(dir, "hive")
	for i := range 2 {
		d := day.AddDate(0, 0, i)
		rec := hiveRecord(d, 30)
		writeRecord(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "data_0.parquet"), rec)
		rec.Release()
	}
	full := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, 1))
	writeRecord(t, filepath.Join(dir, "full.parquet"), full)
	full.Release()
	code, _, errs := icerun("create", "shop.orders", "-warehouse", wh, "-schema-from", filepath.Join(dir, "full.parquet"), "-partition", "days(event_ts)")
	require.Equal(t, 0, code, errs)
	code, out, errs := icerun("replace", "shop.orders", "-warehouse", wh, "-key", "event_ts_day=2026-07-14", "-file", filepath.Join(in, "event_date=2026-07-14"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+30 rows")
	require.Contains(t, errs, "filled event_date from the Hive folders")
	// Dynamic replace of the whole tree: each file gets its own folder's value.
	code, out, errs = icerun("replace", "shop.orders", "-warehouse", wh, in)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "2 partitions")
	rows := tableRows(t, wh, icetable.Identifier{"shop", "orders"})
	require.EqualValues(t, 60, rows.NumRows())
	col := rows.Column(rows.Schema().FieldIndices("event_date")[0])
	require.Zero(t, col.NullN(), "event_date filled in every row")
	ts := rows.Column(rows.Schema().FieldIndices("event_ts")[0])
	for ci, ch := range col.Data().Chunks() {
		dates, stamps := ch.(*array.Date32), ts.Data().Chunk(ci).(*array.Timestamp)
		for i := range dates.Len() {
			want := stamps.Value(i).ToTime(arrow.Microsecond).UTC().Format(time.DateOnly)
			require.Equal(t, want, dates.Value(i).ToTime().Format(time.DateOnly), "the folder of the row's own file")
		}
	}
}

// A folder value that does not parse as the column's type is refused.
func TestHiveFolderValueBad(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	rec := hiveRecord(day, 5)
	writeRecord(t, filepath.Join(in, "event_date=yesterday", "data_0.parquet"), rec)
	rec.Release()
	code, _, errs := icerun("replace", "db.fact_orders", "-warehouse", wh, in)
	require.Equal(t, exitData, code, errs)
	require.Contains(t, errs, "event_date=yesterday")
}
