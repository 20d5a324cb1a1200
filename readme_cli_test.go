package icerun_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
)

// readmeCLIBlock returns the ```sh block of the README's command-line
// section.
func readmeCLIBlock(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "\n## The command line\n")
	require.True(t, ok, "README has a command-line section")
	_, code, ok := strings.Cut(after, "```sh\n")
	require.True(t, ok, "a sh block in the command-line section")
	code, _, ok = strings.Cut(code, "\n```")
	require.True(t, ok)
	return code
}

// The README's command-line walkthrough runs as written, on input laid out
// as its DuckDB lines write it: out/event_date=D/data_0.parquet without the
// event_date column, and sample.parquet with every column, all columns
// optional (DuckDB's COPY of a CSV). The duckdb lines are replaced by that
// input and the go build line by a build of cmd/icerun; every ./icerun
// line must succeed, and the table ends with every day's rows.
func TestReadmeCommandLine(t *testing.T) {
	dir := t.TempDir()
	from, to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	const perDay = 40
	days := 0
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		writeDuckDBLike(t, filepath.Join(dir, "out", "event_date="+d.Format(time.DateOnly), "data_0.parquet"), orderdata.Day(d, perDay), 5)
		days++
	}
	writeDuckDBLike(t, filepath.Join(dir, "sample.parquet"), orderdata.Day(to, 1), 6)

	var ran []string
	for _, line := range strings.Split(readmeCLIBlock(t), "\n") {
		cmdText, _, _ := strings.Cut(line, "#")
		fields := strings.Fields(cmdText)
		switch {
		case len(fields) == 0, fields[0] == "duckdb":
		case fields[0] == "go":
			require.Equal(t, []string{"go", "build", "-o", "icerun", "./cmd/icerun"}, fields, "the build line")
			root, err := filepath.Abs(".")
			require.NoError(t, err)
			build := exec.Command("go", "build", "-o", filepath.Join(dir, "icerun"), "./cmd/icerun")
			build.Dir = root
			out, err := build.CombinedOutput()
			require.NoError(t, err, "%s", out)
		case fields[0] == "./icerun":
			require.NotContains(t, cmdText, "'", "the test splits lines on spaces: no quoting")
			run := exec.Command(filepath.Join(dir, "icerun"), fields[1:]...)
			run.Dir = dir
			out, err := run.CombinedOutput()
			require.NoError(t, err, "%s:\n%s", strings.TrimSpace(cmdText), out)
			ran = append(ran, strings.Join(fields[:2], " "))
		default:
			t.Fatalf("README command-line block: no rule to run %q", line)
		}
	}
	require.Subset(t, ran, []string{"./icerun create", "./icerun replace", "./icerun backfill"})

	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(dir, "warehouse"))
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, icetable.Identifier{"shop", "orders"})
	require.NoError(t, err)
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	require.NoError(t, err)
	var rows int64
	for rec, err := range batches {
		require.NoError(t, err)
		rows += rec.NumRows()
		rec.Release()
	}
	require.EqualValues(t, days*perDay, rows, "every day's rows, once")
}

// writeDuckDBLike writes the first cols columns of the orders to a Parquet
// file, every column optional.
func writeDuckDBLike(t *testing.T, path string, orders []orderdata.Order, cols int) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	rec := orderdata.Batch(orderdata.ArrowSchema(), orders)
	defer rec.Release()
	fields := make([]arrow.Field, cols)
	for i := range fields {
		fields[i] = rec.Schema().Field(i)
		fields[i].Nullable = true
	}
	opt := array.NewRecordBatch(arrow.NewSchema(fields, nil), rec.Columns()[:cols], rec.NumRows())
	defer opt.Release()
	tbl := array.NewTableFromRecords(opt.Schema(), []arrow.RecordBatch{opt})
	defer tbl.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, pqarrow.WriteTable(tbl, f, 1024, nil, pqarrow.DefaultWriterProps()))
}
