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

// walkTarget is a catalog the walkthrough runs on: the environment its
// commands get.
type walkTarget struct {
	name string
	env  []string // added to HOME and PATH
}

// walkTargets are the embedded catalog, PostgreSQL + S3 when
// scripts/integration pg s3 started them (ICERUN_PG_URI, ICERUN_S3_*) and
// Apache Iceberg's REST catalog server when it started that
// (ICERUN_REST_*); with ICERUN_WALKTHROUGH_TARGETS naming pg+s3 or rest
// (as .ci/run does) their absence fails the test.
func walkTargets(t *testing.T) []walkTarget {
	out := []walkTarget{{name: "sqlite"}}
	want := os.Getenv("ICERUN_WALKTHROUGH_TARGETS")
	if uri := os.Getenv("ICERUN_REST_URI"); uri != "" {
		env := []string{"ICERUN_CATALOG=walk", "ICERUN_CATALOG__WALK__TYPE=rest", "ICERUN_CATALOG__WALK__URI=" + uri}
		for k, v := range map[string]string{"WAREHOUSE": "ICERUN_REST_WAREHOUSE", "S3__ENDPOINT": "ICERUN_REST_S3_ENDPOINT", "S3__REGION": "ICERUN_REST_S3_REGION",
			"S3__ACCESS_KEY_ID": "ICERUN_REST_S3_ACCESS_KEY", "S3__SECRET_ACCESS_KEY": "ICERUN_REST_S3_SECRET_KEY"} {
			if val := os.Getenv(v); val != "" {
				env = append(env, "ICERUN_CATALOG__WALK__"+k+"="+val)
			}
		}
		out = append(out, walkTarget{name: "rest", env: env})
	} else if strings.Contains(want, "rest") {
		t.Fatal("ICERUN_WALKTHROUGH_TARGETS names rest but ICERUN_REST_URI is not set (scripts/integration rest)")
	}
	pg, endpoint := os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_S3_ENDPOINT")
	if pg == "" || endpoint == "" {
		if strings.Contains(want, "pg+s3") {
			t.Fatal("ICERUN_WALKTHROUGH_TARGETS names pg+s3 but ICERUN_PG_URI or ICERUN_S3_ENDPOINT is not set (scripts/integration pg s3)")
		}
		return out
	}
	return append(out, walkTarget{name: "pg+s3", env: []string{
		"ICERUN_CATALOG=walk",
		"ICERUN_CATALOG__WALK__URI=" + pg,
		"ICERUN_CATALOG__WALK__WAREHOUSE=s3://" + os.Getenv("ICERUN_S3_BUCKET") + "/walkthrough-" + time.Now().UTC().Format("20060102T150405.000000000"),
		"ICERUN_CATALOG__WALK__S3__ENDPOINT=" + endpoint,
		"ICERUN_CATALOG__WALK__S3__REGION=" + os.Getenv("ICERUN_S3_REGION"),
		"ICERUN_CATALOG__WALK__S3__ACCESS_KEY_ID=" + os.Getenv("ICERUN_S3_ACCESS_KEY"),
		"ICERUN_CATALOG__WALK__S3__SECRET_ACCESS_KEY=" + os.Getenv("ICERUN_S3_SECRET_KEY"),
	}})
}

// The walkthrough of docs/cli.md, line by line, through the built binary
// and a shell (the globs are the shell's), on the embedded catalog and,
// where scripts/integration started them, on PostgreSQL + S3 and on the
// REST catalog.
func TestWalkthrough(t *testing.T) {
	for _, target := range walkTargets(t) {
		t.Run(target.name, func(t *testing.T) { walk(t, target) })
	}
}

func walk(t *testing.T, target walkTarget) {
	dir := t.TempDir()
	first := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	perDay := duckDBDays(t, filepath.Join(dir, "events"), first, first.AddDate(0, 0, 1), first.AddDate(0, 0, 2))
	bin := filepath.Dir(binary(t))
	env := append([]string{"HOME=" + dir, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, target.env...)
	shell := func(line string) (string, error) {
		sh := exec.Command("bash", "-c", line)
		sh.Dir = dir
		sh.Env = env
		out, err := sh.CombinedOutput()
		return string(out), err
	}
	if target.env != nil { // a shared catalog: the table of an earlier run goes first
		_, _ = shell("icerun drop shop.events -purge")
		t.Cleanup(func() { _, _ = shell("icerun drop shop.events -purge") })
	}
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
		out, err := shell(line)
		require.NoError(t, err, "%s\n%s", line, out)
		for _, w := range want[i] {
			require.Contains(t, out, w, "%s", line)
		}
	}
	if target.env != nil {
		return // the describe line checked the record count
	}
	rows := tableRows(t, filepath.Join(dir, "warehouse"), icetable.Identifier{"shop", "events"})
	require.EqualValues(t, 3*perDay, rows.NumRows())
	require.Zero(t, rows.Column(rows.Schema().FieldIndices("event_date")[0]).NullN(), "event_date filled from the folders")
}
