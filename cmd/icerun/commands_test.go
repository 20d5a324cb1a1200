package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// The small things a newcomer trips over.
func TestMessages(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "a.parquet"), day, 40)
	parquetFile(t, filepath.Join(in, "b.parquet"), day, 25)
	tbl := []string{"db.fact_orders", "-warehouse", wh}
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errs := icerun(append(append([]string{args[0]}, tbl...), args[1:]...)...)
		require.Equal(t, want, code, "%v\n%s%s", args, out, errs)
		return out, errs
	}
	// A bad date key says the format.
	_, errs := run(exitRequest, "replace", "-key", "event_date=14-07-2026", filepath.Join(in, "a.parquet"))
	require.Contains(t, errs, "event_date=YYYY-MM-DD")

	// plan says when the input is what the partition holds.
	run(0, "replace", "-key", "event_date=2026-07-14", filepath.Join(in, "a.parquet"))
	out, _ := run(0, "plan", "-key", "event_date=2026-07-14", filepath.Join(in, "a.parquet"))
	require.Contains(t, out, "unchanged:")
	out, _ = run(0, "plan", "-key", "event_date=2026-07-14", filepath.Join(in, "b.parquet"))
	require.NotContains(t, out, "unchanged:")

	// A publish conflict names -force.
	run(0, "replace", "-key", "event_date=2026-07-14", "-branch", "audit", filepath.Join(in, "b.parquet"))
	parquetFile(t, filepath.Join(in, "c.parquet"), day, 7)
	run(0, "replace", "-key", "event_date=2026-07-14", filepath.Join(in, "c.parquet"))
	_, errs = run(exitRequest, "publish", "-branch", "audit")
	require.Contains(t, errs, "-branch audit -force")

	// branches lists main and the branch; drop-branch removes it.
	out, _ = run(0, "branches")
	require.Contains(t, out, "main ")
	require.Contains(t, out, "audit ")
	run(0, "drop-branch", "-branch", "audit")
	out, _ = run(0, "branches")
	require.NotContains(t, out, "audit")

	// A backfill says which table properties it set.
	d := filepath.Join(in, "byday")
	parquetFile(t, filepath.Join(d, "event_date=2026-07-13", "part-0.parquet"), day.AddDate(0, 0, -1), 5)
	out, _ = run(0, "backfill", "-dir", d, "-from", "event_date=2026-07-13", "-to", "event_date=2026-07-13")
	require.Regexp(t, `table properties set: .*write.metadata.delete-after-commit.enabled=true`, out)
	out, _ = run(0, "backfill", "-dir", d, "-from", "event_date=2026-07-13", "-to", "event_date=2026-07-13")
	require.NotContains(t, out, "table properties set", "nothing changed the second time")
}

func TestListAndVersion(t *testing.T) {
	wh := warehouse(t)
	code, out, errs := icerun("list", "-warehouse", wh)
	require.Equal(t, 0, code, errs)
	require.Equal(t, "db\n", out)
	code, out, errs = icerun("list", "db", "-warehouse", wh)
	require.Equal(t, 0, code, errs)
	require.Equal(t, "db.fact_orders\n", out)
	code, out, _ = icerun("version")
	require.Equal(t, 0, code)
	require.True(t, strings.HasPrefix(out, "icerun "), out)
}

// upsert by key; window replaces the last N days in one snapshot; the
// JSON log has one record per outcome.
func TestUpsertWindowAndJSONLog(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "a.parquet"), day, 40)
	code, _, errs := icerun("replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-13", filepath.Join(in, "a.parquet"), "-log-format", "json")
	require.Equal(t, exitData, code, errs)
	var rec map[string]any
	first, _, _ := strings.Cut(errs, "\n")
	require.NoError(t, json.Unmarshal([]byte(first), &rec), "a JSON log line: %q", errs)
	require.Equal(t, "ERROR", rec["level"])
	code, out, errs := icerun("upsert", "db.fact_orders", "-warehouse", wh, "-on", "order_id", filepath.Join(in, "a.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+40 rows")
	code, out, errs = icerun("upsert", "db.fact_orders", "-warehouse", wh, "-on", "order_id", filepath.Join(in, "a.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "unchanged")

	for i := range 3 {
		d := day.AddDate(0, 0, -i)
		parquetFile(t, filepath.Join(in, "win", "event_date="+d.Format(time.DateOnly), "p.parquet"), d, 10+i)
	}
	code, out, errs = icerun("window", "db.fact_orders", "-warehouse", wh, "-last", "3", "-end", "event_date=2026-07-14", filepath.Join(in, "win"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "3 partitions")
	require.Contains(t, out, "event_date=2026-07-12: +12 rows")
	code, _, errs = icerun("window", "db.fact_orders", "-warehouse", wh, "-last", "1", "-end", "event_date=2026-07-14", filepath.Join(in, "win"))
	require.Equal(t, exitData, code, "rows outside a window are refused by default: %s", errs)
	code, _, errs = icerun("replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", "-log-format", "yaml", filepath.Join(in, "a.parquet"))
	require.Equal(t, exitUsage, code, errs)
}

// An unpartitioned table: created without -partition, replaced whole by
// a replace without -key.
func TestUnpartitioned(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	for i, n := range []int{30, 12} {
		rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, n))
		writeRecord(t, filepath.Join(dir, []string{"a", "b"}[i]+".parquet"), rec)
		rec.Release()
	}
	code, out, errs := icerun("create", "shop.dim", "-warehouse", wh, "-schema-from", filepath.Join(dir, "a.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "unpartitioned")
	code, out, errs = icerun("replace", "shop.dim", "-warehouse", wh, filepath.Join(dir, "a.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+30 rows")
	code, out, errs = icerun("replace", "shop.dim", "-warehouse", wh, filepath.Join(dir, "b.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "+12 rows")
	require.Contains(t, out, "-30 rows")
}

// An unchanged replace -branch says that it made no branch, instead of
// leaving publish to fail on a branch that does not exist.
func TestUnchangedBranchReplace(t *testing.T) {
	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "a.parquet"), day, 40)
	code, _, errs := icerun("replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", filepath.Join(in, "a.parquet"))
	require.Equal(t, 0, code, errs)
	code, out, errs := icerun("replace", "db.fact_orders", "-warehouse", wh, "-key", "event_date=2026-07-14", "-branch", "audit", filepath.Join(in, "a.parquet"))
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "unchanged")
	require.Contains(t, out, "branch audit was not created")
}

// A flag that means nothing to a command is not offered to it.
func TestFlagsNotOffered(t *testing.T) {
	wh := warehouse(t)
	for _, args := range [][]string{
		{"history", "db.fact_orders", "event_date=2026-07-14", "-code-version", "v1"},
		{"describe", "db.fact_orders", "-run-id", "r"},
		{"drop-branch", "db.fact_orders", "-branch", "b", "-code-version", "v1"},
		{"list", "-table", "db.fact_orders"},
		{"version", "-warehouse", wh},
	} {
		code, _, errs := icerun(append(args, "-warehouse", wh)...)
		require.Equal(t, exitUsage, code, "%v: %s", args, errs)
		require.Contains(t, errs, "flag provided but not defined", "%v", args)
	}
}

// On an unpartitioned table the one partition, whose key is empty, is
// named for what it is in every line that lists partitions.
func TestUnpartitionedOutputNamesTheWholeTable(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	for i, n := range []int{20, 12} {
		rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day, n))
		writeRecord(t, filepath.Join(dir, []string{"a", "b"}[i]+".parquet"), rec)
		rec.Release()
	}
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	code, _, errs := icerun("create", "shop.dim", "-warehouse", wh, "-schema-from", a)
	require.Equal(t, 0, code, errs)
	for _, args := range [][]string{
		{"replace", "shop.dim", a},
		{"upsert", "shop.dim", "-on", "order_id", a},
		{"replace", "shop.dim", "-branch", "audit", b},
	} {
		code, out, errs := icerun(append(args, "-warehouse", wh)...)
		require.Equal(t, 0, code, "%v: %s", args, errs)
		require.Contains(t, out, "\n  partitions: the whole table (unpartitioned)\n", "%v", args)
		require.NotRegexp(t, `partitions: *\n|\n  : `, out, "%v", args)
	}
}
