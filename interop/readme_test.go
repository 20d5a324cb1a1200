//go:build interop

package interop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// The README's section on reading icerun's tables with other engines is
// run here as written: its Python blocks, with the engines scripts/engines
// installs, against tables icerun wrote through the catalog the README
// names.
const readmeEnginesHeading = "## Read the result with other engines"

// interopEnginesHeading is the section of docs/interop.md that carries on
// the README's: Spark, DuckDB and the PostgreSQL + S3 properties.
const interopEnginesHeading = "## Engine configuration"

// readmeDays are the rows each test writes: the README's snippets count
// the rows of 2026-07-14, and the day after must not be counted.
var readmeDays = []struct {
	day  time.Time
	rows int
}{
	{time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 1000},
	{time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC), 300},
}

// TestReadmeEmbeddedSnippets runs the README's PyIceberg and Spark
// snippets for the embedded catalog beside a warehouse that icerun wrote
// with catalogconfig.OpenLocal, as `go run ./examples/daily` does.
func TestReadmeEmbeddedSnippets(t *testing.T) {
	py := readmePython(t)
	if !slices.Contains(Targets(), "sqlite") {
		t.Skip("the embedded catalog runs with the sqlite target")
	}
	blocks := readmePythonBlocks(t)
	dir := t.TempDir()
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(dir, "warehouse"))
	require.NoError(t, err)
	readmeWrite(t, cat)

	out := runPython(t, py, dir, blocks[0])
	require.Equal(t, "1000", strings.TrimSpace(out), "PyIceberg snippet's output")

	out = runPython(t, py, dir, blocks[1])
	require.Regexp(t, regexp.MustCompile(`(?m)^\|\s*1000\|$`), out, "Spark snippet's output")
}

// TestReadmeDuckDBSnippet runs the README's DuckDB block on the embedded
// catalog with $ICERUN_DUCKDB_PYTHON, a Python with duckdb and the
// duckdb-ext-iceberg, -avro and -sqlite packages, which scripts/engines
// installs (CI runs it; without the variable the test skips). The extensions
// load from those packages instead of INSTALL, which needs DuckDB's own
// download site.
func TestReadmeDuckDBSnippet(t *testing.T) {
	py := os.Getenv("ICERUN_DUCKDB_PYTHON")
	if py == "" {
		catalogtest.Refused(t, "ICERUN_DUCKDB_PYTHON is not set: a Python with duckdb and duckdb-ext-iceberg, -avro, -sqlite")
	}
	if !slices.Contains(Targets(), "sqlite") {
		t.Skip("the embedded catalog runs with the sqlite target")
	}
	section := readmeEnginesSection(t)
	_, sql, ok := strings.Cut(section, "```sql\n")
	require.True(t, ok, "the engines section has a sql block")
	sql, _, _ = strings.Cut(sql, "\n```")
	dir := t.TempDir()
	cat, err := catalogconfig.OpenLocal(context.Background(), filepath.Join(dir, "warehouse"))
	require.NoError(t, err)
	readmeWrite(t, cat)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "snippet.sql"), []byte(sql), 0o644))
	out := runPython(t, py, dir, duckdbRunner)
	require.Equal(t, "[(1000,)]", strings.TrimSpace(out), "DuckDB snippet's output")
}

// duckdbRunner runs snippet.sql statement by statement and prints the last
// result: INSTALL is skipped and LOAD takes the extension file of the
// duckdb-ext-NAME package (avro, which iceberg needs, first).
const duckdbRunner = `
import duckdb, glob, site
exts = {}
for d in site.getsitepackages():
    for f in glob.glob(d + "/duckdb_ext/extensions/v" + duckdb.__version__ + "/*/*.duckdb_extension"):
        exts[f.rsplit("/", 1)[1].split(".")[0].replace("sqlite_scanner", "sqlite")] = f
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.execute("LOAD '%s'" % exts["avro"])  # iceberg's dependency, which DuckDB would autoload
rows = None
for stmt in open("snippet.sql").read().split(";"):
    words = stmt.split()
    if not words or words[0].upper() == "INSTALL":
        continue
    if words[0].upper() == "LOAD":
        con.execute("LOAD '%s'" % exts[words[1]])
        continue
    rows = con.execute(stmt).fetchall()
print(rows)
`

// TestReadmePostgresS3Properties opens a catalog named prod on PostgreSQL
// with an S3 warehouse, as catalogconfig.Open(ctx, "prod") does, writes
// through it, and reads it back with the README's PyIceberg catalog and
// Spark catalog properties, their placeholders replaced by the live
// servers' values (scripts/integration pg s3).
func TestReadmePostgresS3Properties(t *testing.T) {
	py := readmePython(t)
	if !slices.Contains(Targets(), "pg+s3") {
		t.Skip("PostgreSQL + S3 runs with the pg+s3 target (scripts/integration pg s3)")
	}
	pgURI, bucket := os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_S3_BUCKET")
	endpoint, region := os.Getenv("ICERUN_S3_ENDPOINT"), os.Getenv("ICERUN_S3_REGION")
	key, secret := os.Getenv("ICERUN_S3_ACCESS_KEY"), os.Getenv("ICERUN_S3_SECRET_KEY")
	u, err := url.Parse(pgURI)
	require.NoError(t, err)
	pass, _ := u.User.Password()
	warehouse := "s3://" + bucket + "/readme-" + randomID()

	ctx := context.Background()
	// The properties of the README's production config, as catalogconfig
	// completes them for a postgres:// uri.
	cat, err := catalog.Load(ctx, "prod", iceberg.Properties{
		"type":                  "sql",
		"uri":                   pgURI,
		sqlcat.DialectKey:       string(sqlcat.Postgres),
		sqlcat.DriverKey:        "pg",
		"init_catalog_tables":   "true",
		"warehouse":             warehouse,
		iceio.S3EndpointURL:     endpoint,
		iceio.S3Region:          region,
		iceio.S3AccessKeyID:     key,
		iceio.S3SecretAccessKey: secret,
	})
	require.NoError(t, err)
	if c, ok := cat.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	readmeWrite(t, cat)

	props := replaceAll(t, readmePythonBlocks(t)[2], [][2]string{
		{"https://s3.example.com", endpoint},
		{"eu-west-1", region},
		{"AKIAEXAMPLE", key},
		{"SECRETEXAMPLE", secret},
		{"postgresql+psycopg2://etl:PASSWORD@db.example.com:5432/iceberg", "postgresql+psycopg2://" + u.User.String() + "@" + u.Host + u.Path},
		{"jdbc:postgresql://db.example.com:5432/iceberg", "jdbc:postgresql://" + u.Host + u.Path},
		{`"jdbc.user": "etl"`, fmt.Sprintf("%q: %q", "jdbc.user", u.User.Username())},
		{`"jdbc.password": "PASSWORD"`, fmt.Sprintf("%q: %q", "jdbc.password", pass)},
		{"s3://my-bucket/warehouse", warehouse},
	})
	program := "import os\nfrom pyiceberg.catalog.sql import SqlCatalog\n" + props + `
orders = pyiceberg_catalog.load_table("shop.fact_orders")
print("pyiceberg", orders.scan(row_filter="event_date = '2026-07-14'").to_arrow().num_rows)

from pyspark.sql import SparkSession
builder = SparkSession.builder.config("spark.jars", os.environ["ICERUN_SPARK_JARS"])
builder = builder.config("spark.sql.catalog.prod", "org.apache.iceberg.spark.SparkCatalog")
for k, v in spark_catalog.items():
    builder = builder.config("spark.sql.catalog.prod." + k, v)
spark = builder.getOrCreate()
n = spark.sql("SELECT count(*) FROM prod.shop.fact_orders WHERE event_date = '2026-07-14'").collect()[0][0]
print("spark", n)
`
	out := runPython(t, py, t.TempDir(), program)
	require.Contains(t, out, "pyiceberg 1000\n")
	require.Contains(t, out, "spark 1000\n")
}

// readmePython is $ICERUN_PYTHON; without it the test skips, or fails
// under CI=true.
func readmePython(t *testing.T) string {
	t.Helper()
	py, jars := os.Getenv("ICERUN_PYTHON"), os.Getenv("ICERUN_SPARK_JARS")
	if py == "" || jars == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v, and CI=true requires them", ErrNoEngines)
		}
		t.Skip(ErrNoEngines)
	}
	return py
}

// readmeWrite creates shop.fact_orders (the examples' order table) in cat
// and writes readmeDays into it with icerun.
func readmeWrite(t *testing.T, cat catalog.Catalog) {
	t.Helper()
	ctx := context.Background()
	ident := orderdata.FactOrders
	if err := cat.DropTable(ctx, ident); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("drop %v: %v", ident, err)
	}
	require.NoError(t, orderdata.CreateTable(ctx, cat, ident))
	w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("readme"))
	require.NoError(t, err)
	for _, d := range readmeDays {
		key, err := w.Key("event_date=" + d.day.Format(time.DateOnly))
		require.NoError(t, err)
		rows := orderdata.Reader(orderdata.Day(d.day, d.rows), 256)
		res, err := w.ReplacePartition(ctx, key, rows)
		rows.Release()
		require.NoError(t, err)
		require.EqualValues(t, d.rows, res.AddedRows)
	}
	t.Cleanup(func() { _ = cat.DropTable(context.Background(), ident) })
}

// readmePythonBlocks returns the ```python blocks of the README's engines
// section, in order: PyIceberg and Spark on the embedded catalog, then the
// PostgreSQL + S3 properties.
func readmePythonBlocks(t *testing.T) []string {
	t.Helper()
	section := readmeEnginesSection(t)
	var blocks []string
	for {
		var code string
		var ok bool
		if _, section, ok = strings.Cut(section, "```python\n"); !ok {
			break
		}
		code, section, ok = strings.Cut(section, "\n```")
		require.True(t, ok, "an unclosed python block")
		blocks = append(blocks, code+"\n")
	}
	require.Len(t, blocks, 3, "the engines section's python blocks: PyIceberg, Spark, PostgreSQL + S3")
	return blocks
}

// readmeEnginesSection returns the README's section on reading the
// tables with other engines (the PyIceberg snippet), followed by
// docs/interop.md's engine configuration (Spark, PostgreSQL + S3, DuckDB),
// where the README sends the reader for the rest.
func readmeEnginesSection(t *testing.T) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..")
	var out string
	for _, doc := range []struct{ file, heading string }{
		{"README.md", readmeEnginesHeading},
		{filepath.Join("docs", "interop.md"), interopEnginesHeading},
	} {
		raw, err := os.ReadFile(filepath.Join(root, doc.file))
		require.NoError(t, err)
		_, section, ok := strings.Cut(string(raw), "\n"+doc.heading+"\n")
		require.True(t, ok, "%s has %q", doc.file, doc.heading)
		section, _, _ = strings.Cut(section, "\n## ")
		out += section + "\n"
	}
	return out
}

// replaceAll replaces each placeholder, which must occur in s.
func replaceAll(t *testing.T, s string, pairs [][2]string) string {
	t.Helper()
	for _, p := range pairs {
		require.Contains(t, s, p[0], "the README's PostgreSQL + S3 block has placeholder %q", p[0])
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

// runPython runs program with py in dir and returns its standard output.
func runPython(t *testing.T, py, dir, program string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "snippet.py")
	require.NoError(t, os.WriteFile(file, []byte(program), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYSPARK_PYTHON="+py, "TZ=UTC")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "python %s:\n%s\nstderr:\n%s", file, program, tail(stderr.String(), 4000))
	return string(out)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
