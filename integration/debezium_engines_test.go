//go:build integration

package integration

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/internal/enginestest"
)

// debeziumFilters are the predicates TestDebeziumSink's final table is read
// with, besides the full read: on order_day (the partition source column:
// one partition, and a range of them), on id (the upsert key), and on
// both. Each is one text in three dialects: PostgreSQL's SQL (the expected
// rows), Spark's SQL and PyIceberg's expression strings.
var debeziumFilters = []string{
	"order_day = '2026-07-16'",
	"order_day >= '2026-07-15'",
	"id >= 5 AND id <= 20",
	"order_day <= '2026-07-15' AND id > 8",
}

// debeziumEngines reads the table ident of the embedded catalog in wh with
// Spark (Java Iceberg) and PyIceberg, in full and with each of
// debeziumFilters, and checks each read against the PostgreSQL rows: want
// in full, filtered[f] under filter f ("id customer status order_day", by
// id). Without the engines it skips, or fails under CI=true.
func debeziumEngines(t *testing.T, wh string, ident icetable.Identifier, want []string, filtered map[string][]string) {
	e := enginestest.Get(t)
	begin := time.Now()
	abs, err := filepath.Abs(wh)
	if err != nil {
		t.Fatal(err)
	}
	spark, py := enginestest.LocalCatalog(abs)
	e.Configure(t, catalogconfig.LocalName, spark, py)
	sparkName := fmt.Sprintf("`%s`.`%s`.`%s`", catalogconfig.LocalName, ident[0], ident[1])
	pyName := ident[0] + "." + ident[1]
	cols := []string{"id", "customer", "status", "order_day"}

	type read struct {
		what string
		want []string
	}
	var reads []read
	var reqs []enginestest.Request
	for _, f := range append([]string{""}, debeziumFilters...) {
		exp, where, label := want, "", "in full"
		if f != "" {
			exp, where, label = filtered[f], " WHERE "+f, "where "+f
		}
		reqs = append(reqs,
			enginestest.SparkSQL("SELECT "+strings.Join(cols, ", ")+" FROM "+sparkName+where),
			enginestest.PyIcebergScan(catalogconfig.LocalName, pyName, enginestest.Scan{Filter: f, Columns: cols}))
		reads = append(reads, read{"Spark " + label, exp}, read{"PyIceberg " + label, exp})
	}
	res := e.Batch(t, reqs)
	var rows int
	for i, r := range reads {
		got := engineOrders(res[i].Named())
		rows += len(got)
		if !slices.Equal(got, r.want) {
			t.Errorf("%s: %d rows:\n%s\nPostgreSQL (%d rows):\n%s", r.what, len(got), strings.Join(got, "\n"), len(r.want), strings.Join(r.want, "\n"))
		}
	}
	t.Logf("Spark and PyIceberg read what PostgreSQL holds: %d reads (in full and %d filters each), %d rows compared, in %s",
		len(reads), len(debeziumFilters), rows, time.Since(begin).Round(time.Millisecond))
}

// engineOrders are the engines' rows of the orders table as icebergRows
// writes them ("id customer status order_day"), by id. A value of another
// type than the column's (a null among them) is written as it came, so
// that it differs from PostgreSQL's.
func engineOrders(rows []enginestest.Row) []string {
	type row struct {
		id   int64
		text string
	}
	out := make([]row, 0, len(rows))
	for _, r := range rows {
		val := func(col, tag string) (string, bool) {
			s, _ := r[col].(string)
			return strings.CutPrefix(s, tag+":")
		}
		field := func(col, tag string) string {
			if v, ok := val(col, tag); ok {
				return v
			}
			return fmt.Sprintf("%s=%v", col, r[col])
		}
		day := field("order_day", "date")
		if v, ok := val("order_day", "date"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				day = time.Unix(0, 0).UTC().AddDate(0, 0, n).Format(time.DateOnly)
			}
		}
		id, _ := strconv.ParseInt(field("id", "i"), 10, 64)
		out = append(out, row{id, strings.Join([]string{field("id", "i"), field("customer", "s"), field("status", "s"), day}, " ")})
	}
	slices.SortFunc(out, func(a, b row) int { return cmp.Or(cmp.Compare(a.id, b.id), strings.Compare(a.text, b.text)) })
	texts := make([]string, len(out))
	for i, r := range out {
		texts[i] = r.text
	}
	return texts
}
