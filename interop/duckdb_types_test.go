//go:build interop

package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
)

// duckDBTypes writes a table of every DuckDB column type a newcomer's
// files hold (signed and unsigned integers, HUGEINT, floats, decimals of
// 64 and 128 bits, strings, blobs, booleans, dates, times, timestamps of
// every unit and zone, uuids, lists, structs, maps, intervals) as Hive
// folders by event_date, and the same rows into src.parquet.
const duckDBTypes = `
import duckdb
con = duckdb.connect()
con.execute("SET TimeZone = 'UTC'")
con.execute("""CREATE TABLE t AS SELECT i::BIGINT id, (i%3)::TINYINT ti, i::SMALLINT si, i::INTEGER ii,
 (i%200)::UTINYINT ut, i::USMALLINT us, (4294967295 - i)::UINTEGER ui, (18446744073709551615 - i)::UBIGINT ub,
 (i::HUGEINT*1000000000000000000) hi, i::FLOAT f, i::DOUBLE d, (i/7)::DECIMAL(10,2) dc, (i/7)::DECIMAL(38,10) dc38,
 'v'||i vs, ('b'||i)::BLOB bl, i%2=0 bo, DATE '2026-07-01' + (i%3)::INTEGER event_date, TIME '01:02:03' t1,
 TIMESTAMP '2026-07-01 10:00:00' + to_seconds(i) ts, TIMESTAMPTZ '2026-07-01 10:00:00+00' + to_microseconds(i) tstz,
 TIMESTAMP_NS '2026-07-01 10:00:00.123456' tns, TIMESTAMP_MS '2026-07-01 10:00:00.123' tms,
 TIMESTAMP_S '2026-07-01 10:00:00' tsec, uuid() u, [i, NULL, i+1] l, {'a': i, 'b': 'x'} st, MAP {'k': i} m,
 to_days(i::INTEGER) iv, CASE WHEN i%5=0 THEN NULL ELSE i END n
 FROM range(1000) r(i)""")
con.execute("COPY t TO 'events' (FORMAT parquet, PARTITION_BY (event_date))")
con.execute("COPY (SELECT * FROM t ORDER BY id) TO 'src.parquet' (FORMAT parquet)")
`

// sameAsSource compares every column of the table PyIceberg reads with
// src.parquet (nanosecond timestamps as microseconds, the table's unit)
// and prints "same NAME" or "DIFF NAME ...".
const sameAsSource = `
import pyarrow.parquet as pq, pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
cat = SqlCatalog("icerun", uri="sqlite:///warehouse/catalog.db")
t = cat.load_table("shop.types").scan().to_arrow().sort_by("id")
s = pq.read_table("src.parquet").sort_by("id")
print("rows", t.num_rows, s.num_rows)
for name in s.column_names:
    a, b = s.column(name), t.column(name)
    if pa.types.is_timestamp(a.type) and a.type.unit == "ns":
        a = a.cast(pa.timestamp("us", a.type.tz))
    a, b = a.to_pylist(), b.to_pylist()
    if a == b:
        print("same", name)
    else:
        i = next(i for i in range(min(len(a), len(b))) if a[i] != b[i])
        print("DIFF", name, repr(a[i])[:80], repr(b[i])[:80])
`

// TestDuckDBTypesThroughTheCLI: DuckDB writes Hive folders holding every
// column type it has; icerun create -schema-from and icerun backfill load
// them as the README's walkthrough does, and PyIceberg reads back exactly
// the rows DuckDB wrote, column by column (unsigned integers at their
// largest included). Needs $ICERUN_DUCKDB_PYTHON and $ICERUN_PYTHON
// (scripts/engines).
func TestDuckDBTypesThroughTheCLI(t *testing.T) {
	duck, py := os.Getenv("ICERUN_DUCKDB_PYTHON"), os.Getenv("ICERUN_PYTHON")
	if duck == "" || py == "" {
		catalogtest.Refused(t, "ICERUN_DUCKDB_PYTHON and ICERUN_PYTHON are not set (eval \"$(scripts/engines)\")")
	}
	if !slices.Contains(Targets(), "sqlite") {
		t.Skip("the embedded catalog runs with the sqlite target")
	}
	dir := t.TempDir()
	runPython(t, duck, dir, duckDBTypes)
	bin := filepath.Join(dir, "icerun")
	build := exec.Command("go", "build", "-o", bin, "./cmd/icerun")
	build.Dir = ".."
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, args := range [][]string{
		{"create", "shop.types", "-schema-from", "events/", "-partition", "event_date"},
		{"backfill", "shop.types", "-dir", "events/", "-from", "event_date=2026-07-01", "-to", "event_date=2026-07-03"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "icerun %s:\n%s", strings.Join(args, " "), out)
	}
	got := runPython(t, py, dir, sameAsSource)
	require.Contains(t, got, "rows 1000 1000\n")
	require.NotContains(t, got, "DIFF", "PyIceberg reads other values than DuckDB wrote:\n%s", got)
	require.Equal(t, 29, strings.Count(got, "same "), "every column compared:\n%s", got)
}
