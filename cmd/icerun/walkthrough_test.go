package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// walkthrough returns the command lines of docs/cli.md's walkthrough: the
// sh block after the <!-- walkthrough --> marker.
func walkthrough(t *testing.T) []string {
	raw, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "<!-- walkthrough -->\n```sh\n")
	require.True(t, ok, "docs/cli.md has the walkthrough block")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

// duckDBDays writes what DuckDB's COPY ... (FORMAT PARQUET, PARTITION_BY
// (event_date)) writes for days of orders: DIR/event_date=D/data_0.parquet
// and data_1.parquet, without the event_date column, REQUIRED columns
// (orderdata's are not nullable). It returns the rows per day.
func duckDBDays(t *testing.T, dir string, days ...time.Time) int {
	const perFile = 500
	for _, d := range days {
		all := orderdata.Day(d, 2*perFile)
		for i := range 2 {
			full := orderdata.Batch(orderdata.ArrowSchema(), all[i*perFile:(i+1)*perFile])
			sc := full.Schema()
			idx := sc.FieldIndices("event_date")[0]
			fields := append(append([]arrow.Field{}, sc.Fields()[:idx]...), sc.Fields()[idx+1:]...)
			cols := append(append([]arrow.Array{}, full.Columns()[:idx]...), full.Columns()[idx+1:]...)
			rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, full.NumRows())
			writeRecord(t, filepath.Join(dir, "event_date="+d.Format(time.DateOnly), "data_"+string(rune('0'+i))+".parquet"), rec)
			rec.Release()
			full.Release()
		}
	}
	return 2 * perFile
}

// The walkthrough of docs/cli.md, line by line, through the built binary
// and a shell (the globs are the shell's), on the embedded catalog.
func TestWalkthrough(t *testing.T) {
	dir := t.TempDir()
	first := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	perDay := duckDBDays(t, filepath.Join(dir, "events"), first, first.AddDate(0, 0, 1), first.AddDate(0, 0, 2))
	bin := filepath.Dir(binary(t))
	lines := walkthrough(t)
	want := [][]string{ // what each line prints (stdout and stderr)
		{"created shop.events", "event_date: optional date", "event_ts_day"},
		{"event_date=2026-07-01: read as event_ts_day=2026-07-01", "filled event_date from the Hive folders", "+1000 rows in"},
		{"reading " + filepath.Join("events", "event_date=VALUE"), "3 keys: ", "0 failed"},
		{"3 keys: 0 written, 1 unchanged, 2 skipped"},
		{"every input row belongs to event_ts_day=2026-07-02", "unchanged:"},
		{"snapshot", "unversioned"},
		{"partition spec", "3000 records"},
	}
	require.Len(t, lines, len(want), "a check for every line of the walkthrough")
	for i, line := range lines {
		sh := exec.Command("bash", "-c", line)
		sh.Dir = dir
		sh.Env = []string{"HOME=" + dir, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
		out, err := sh.CombinedOutput()
		require.NoError(t, err, "%s\n%s", line, out)
		for _, w := range want[i] {
			require.Contains(t, string(out), w, "%s", line)
		}
	}
	rows := tableRows(t, filepath.Join(dir, "warehouse"), icetable.Identifier{"shop", "events"})
	require.EqualValues(t, 3*perDay, rows.NumRows())
	require.Zero(t, rows.Column(rows.Schema().FieldIndices("event_date")[0]).NullN(), "event_date filled from the folders")
}
