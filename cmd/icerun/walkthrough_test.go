package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// readmeWalkthrough returns the lines of the README's command-line
// walkthrough: the sh block of its "The command line" section.
func readmeWalkthrough(t *testing.T) []string {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "\n## The command line\n")
	require.True(t, ok, "README has a command-line section")
	_, block, ok := strings.Cut(after, "```sh\n")
	require.True(t, ok, "a sh block in the command-line section")
	block, _, ok = strings.Cut(block, "\n```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

// docsWalkthrough returns the command lines of docs/cli.md's walkthrough:
// the sh block after the <!-- walkthrough --> marker.
func docsWalkthrough(t *testing.T) []string {
	raw, err := os.ReadFile(cliDoc)
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "<!-- walkthrough -->\n```sh\n")
	require.True(t, ok, "docs/cli.md has the walkthrough block")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	return strings.Split(strings.TrimSpace(block), "\n")
}

// duckDBLine is the README's DuckDB line: duckdb DB -c "SQL".
var duckDBLine = regexp.MustCompile(`^duckdb \S+ -c "([^"]+)"$`)

// duckDBEvents runs sql (the README's COPY of a table named events) in
// DuckDB with $ICERUN_DUCKDB_PYTHON, in dir, on an events table holding
// days of orders (1000 rows a day, event_ts a TIMESTAMPTZ, event_date a
// DATE). It returns the rows per day.
func duckDBEvents(t *testing.T, py, dir, sql string, days ...time.Time) int {
	const perDay = 1000
	var all []orderdata.Order
	for _, d := range days {
		all = append(all, orderdata.Day(d, perDay)...)
	}
	rec := orderdata.Batch(orderdata.ArrowSchema(), all)
	writeRecord(t, filepath.Join(dir, "source", "events.parquet"), rec)
	rec.Release()
	script := `import duckdb, sys
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("CREATE TABLE events AS FROM read_parquet('source/events.parquet')")
con.execute(sys.argv[1])
`
	run := exec.Command(py, "-c", script, sql)
	run.Dir = dir
	out, err := run.CombinedOutput()
	require.NoError(t, err, "DuckDB: %s\n%s", sql, out)
	return perDay
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

// The README's walkthrough (docs/cli.md explains the same lines), line by
// line through a shell (the globs are the shell's) and the built binary,
// on the embedded catalog and, where scripts/integration started them, on
// PostgreSQL + S3 and on the REST catalog. Its input is what the README's
// DuckDB line writes, run in DuckDB when $ICERUN_DUCKDB_PYTHON names a
// Python with duckdb (scripts/engines; CI sets it), else files written in
// the layout DuckDB writes.
func TestWalkthrough(t *testing.T) {
	for _, target := range walkTargets(t) {
		t.Run(target.name, func(t *testing.T) { walk(t, target) })
	}
}

func walk(t *testing.T, target walkTarget) {
	dir := t.TempDir()
	first := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	days := []time.Time{first, first.AddDate(0, 0, 1), first.AddDate(0, 0, 2)}
	bin := binary(t)
	env := append([]string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}, target.env...)
	shell := func(line string) (string, error) {
		sh := exec.Command("bash", "-c", line)
		sh.Dir = dir
		sh.Env = env
		out, err := sh.CombinedOutput()
		return string(out), err
	}
	if target.env != nil { // a shared catalog: the table of an earlier run goes first
		_, _ = shell(bin + " drop shop.events -purge")
		t.Cleanup(func() { _, _ = shell(bin + " drop shop.events -purge") })
	}
	lines := readmeWalkthrough(t)
	var icerunLines []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "./icerun "); ok {
			icerunLines = append(icerunLines, "icerun "+rest)
		}
	}
	require.Equal(t, icerunLines, docsWalkthrough(t), "docs/cli.md explains the README's walkthrough: the same icerun lines")

	want := [][]string{ // what each icerun line prints (stdout and stderr)
		{"created shop.events", "event_date: optional date", "event_ts_day"},
		{"event_date=2026-07-01: read as event_ts_day=2026-07-01", "filled event_date from the Hive folders", "+1000 rows in"},
		{"reading " + filepath.Join("events", "event_date=VALUE"), "3 keys: ", "0 failed"},
		{"3 keys: 0 written, 1 unchanged, 2 skipped"},
		{"every input row belongs to event_ts_day=2026-07-02", "unchanged:"},
		{"snapshot", "unversioned"},
		{"partition spec", "3000 records"},
	}
	require.Len(t, icerunLines, len(want), "a check for every icerun line of the walkthrough")
	require.True(t, duckDBLine.MatchString(lines[0]), "the walkthrough starts with DuckDB's COPY: %s", lines[0])
	require.Equal(t, "go build -o icerun ./cmd/icerun", lines[1], "then builds icerun")

	perDay := 0
	if py := os.Getenv("ICERUN_DUCKDB_PYTHON"); py != "" {
		perDay = duckDBEvents(t, py, dir, duckDBLine.FindStringSubmatch(lines[0])[1], days...)
	} else {
		if os.Getenv("ICERUN_WALKTHROUGH_TARGETS") != "" {
			t.Fatal("ICERUN_WALKTHROUGH_TARGETS is set but ICERUN_DUCKDB_PYTHON is not (eval \"$(scripts/engines)\"): the walkthrough's input must be DuckDB's")
		}
		perDay = duckDBDays(t, filepath.Join(dir, "events"), days...)
	}
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "icerun")), "what the build line makes")
	for i, line := range lines[2:] {
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
	require.EqualValues(t, len(days)*perDay, rows.NumRows())
	require.Zero(t, rows.Column(rows.Schema().FieldIndices("event_date")[0]).NullN(), "event_date filled from the folders")
}
