package decode

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// dbzSchema is the Arrow schema of the orders table of the captured
// envelopes in testdata/debezium (integration.TestDebezium made them).
func dbzSchema(t testing.TB) *arrow.Schema {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "customer", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 5, Name: "order_day", Type: iceberg.PrimitiveTypes.Date, Required: true},
		iceberg.NestedField{ID: 6, Name: "updated_at", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// dbzCaptured reads the captured message values of dir, in offset order
// (a tombstone is an empty file).
func dbzCaptured(t testing.TB, dir string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "debezium", dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured envelopes in %s: %v", dir, err)
	}
	slices.Sort(files)
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			b = nil // Kafka's null value
		}
		out = append(out, b)
	}
	return out
}

func dbzDecode(t *testing.T, sc *arrow.Schema, evolve bool, values [][]byte) Decoded {
	t.Helper()
	dec, err := DebeziumFormat()(sc, evolve)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dec(values)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Rows.Release)
	return d
}

// rowText renders row i of d as "op id customer status amount day
// updated_at".
func rowText(d Decoded, i int) string {
	var b strings.Builder
	b.WriteString(d.Changes[i].Op.String())
	for c := 0; c < int(d.Rows.NumCols()); c++ {
		b.WriteString(" " + d.Rows.Column(c).ValueStr(i))
	}
	return b.String()
}

// The envelopes Debezium's PostgreSQL connector 3.6.1.Final wrote for a
// snapshot of two orders, inserts, updates (one moving an order to
// another day), a transaction of an update and a delete, and a last
// delete: with and without the schema part, they decode to the same rows,
// operations and orders, the tombstones skipped.
func TestDebeziumCaptured(t *testing.T) {
	want := []string{
		"upsert 1 ada created 12.5 2026-07-14 2026-07-14T10:01:00.123456Z",
		"upsert 2 bob created 99.99 2026-07-14 2026-07-14T10:02:00.123456Z",
		"upsert 3 cy created 5 2026-07-15 2026-07-14T10:03:00.123456Z",
		"upsert 4 di created (null) 2026-07-15 2026-07-14T10:04:00.123456Z",
		"upsert 1 ada paid 12.5 2026-07-14 2026-07-14T10:05:00.123456Z",
		"upsert 3 cy paid 5 2026-07-13 2026-07-14T10:06:00.123456Z",
		"upsert 2 bob shipped 99.99 2026-07-14 2026-07-14T10:07:00.123456Z",
		"delete 4   (null) 1970-01-01 1970-01-01T00:00:00Z",
		"upsert 1 ada shipped 12.5 2026-07-14 2026-07-14T10:08:00.123456Z",
		"delete 1   (null) 1970-01-01 1970-01-01T00:00:00Z",
		"upsert 5 ed created 1.05 2026-07-16 2026-07-14T10:09:00.123456Z",
	}
	sc := dbzSchema(t)
	for _, dir := range []string{"schema", "payload"} {
		t.Run(dir, func(t *testing.T) {
			values := dbzCaptured(t, dir)
			d := dbzDecode(t, sc, false, values)
			if len(d.Bad) != 0 {
				t.Fatalf("rejected %+v", d.Bad)
			}
			if !slices.Equal(d.Skipped, []int{8, 11}) {
				t.Errorf("Skipped = %v, want [8 11] (the tombstones)", d.Skipped)
			}
			if len(d.Changes) != len(want) || int(d.Rows.NumRows()) != len(want) {
				t.Fatalf("%d changes, %d rows, want %d", len(d.Changes), d.Rows.NumRows(), len(want))
			}
			row := 0
			for i, v := range values {
				if v == nil {
					continue
				}
				if got := rowText(d, row); got != want[row] {
					t.Errorf("row %d = %q, want %q", row, got, want[row])
				}
				lsn, ts := dbzSource(t, v)
				if got := d.Changes[row].Order; !slices.Equal(got, []int64{lsn, ts}) {
					t.Errorf("value %d: Order = %v, want [%d %d] (source.lsn, source.ts_ms)", i, got, lsn, ts)
				}
				row++
			}
		})
	}
}

// dbzSource reads source.lsn and source.ts_ms of an envelope with the
// standard library alone.
func dbzSource(t *testing.T, v []byte) (lsn, ts int64) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	if p, ok := m["payload"]; ok {
		v = p
	}
	var p struct {
		Source struct {
			LSN  int64 `json:"lsn"`
			TsMs int64 `json:"ts_ms"`
		} `json:"source"`
	}
	if err := json.Unmarshal(v, &p); err != nil {
		t.Fatal(err)
	}
	return p.Source.LSN, p.Source.TsMs
}

// dbzEvent is a bare payload of op with the images and source given.
func dbzEvent(op, before, after, source string) string {
	return fmt.Sprintf(`{"before":%s,"after":%s,"source":%s,"op":%q,"ts_ms":1}`, before, after, source, op)
}

const (
	dbzRow    = `{"order_id":7,"customer":"x","status":"paid","amount":"1.00","order_day":20648,"updated_at":"2026-07-14T10:00:00Z"}`
	dbzSrc    = `{"lsn":100,"ts_ms":5,"snapshot":"false"}`
	dbzKeyRow = `{"order_id":7}`
)

func TestDebeziumEvents(t *testing.T) {
	sc := dbzSchema(t)
	good := []struct {
		name  string
		value string
		op    Op
		order []int64
	}{
		{"insert", dbzEvent("c", "null", dbzRow, dbzSrc), Upsert, []int64{100, 5}},
		{"snapshot read", dbzEvent("r", "null", dbzRow, dbzSrc), Upsert, []int64{100, 5}},
		{"update", dbzEvent("u", dbzRow, dbzRow, `{"lsn":101,"ts_ms":6}`), Upsert, []int64{101, 6}},
		{"delete of the key alone", dbzEvent("d", dbzKeyRow, "null", dbzSrc), Delete, []int64{100, 5}},
		{"with the schema part", `{"schema":{"type":"struct","fields":[]},"payload":` + dbzEvent("c", "null", dbzRow, dbzSrc) + `}`, Upsert, []int64{100, 5}},
		{"unknown fields", `{"x":[1,{"y":2}],` + dbzEvent("c", "null", dbzRow, dbzSrc)[1:], Upsert, []int64{100, 5}},
	}
	for _, c := range good {
		d := dbzDecode(t, sc, false, [][]byte{[]byte(c.value)})
		if len(d.Bad) != 0 || len(d.Changes) != 1 || d.Rows.NumRows() != 1 {
			t.Errorf("%s: bad %+v, %d changes, %d rows; want one change", c.name, d.Bad, len(d.Changes), d.Rows.NumRows())
			continue
		}
		if got := d.Changes[0]; got.Op != c.op || !slices.Equal(got.Order, c.order) {
			t.Errorf("%s: change %v %v, want %v %v", c.name, got.Op, got.Order, c.op, c.order)
		}
		if id := d.Rows.Column(0).ValueStr(0); id != "7" {
			t.Errorf("%s: order_id %s, want 7", c.name, id)
		}
	}

	skipped := []string{"", "null", " ", `{"schema":null,"payload":null}`}
	for _, v := range skipped {
		d := dbzDecode(t, sc, false, [][]byte{[]byte(v)})
		if !slices.Equal(d.Skipped, []int{0}) || len(d.Bad) != 0 || d.Rows.NumRows() != 0 {
			t.Errorf("%q: skipped %v, bad %+v, %d rows; want skipped", v, d.Skipped, d.Bad, d.Rows.NumRows())
		}
	}

	bad := []struct{ name, value, reason string }{
		{"not JSON", `{"op":`, "debezium: "},
		{"an array", `[1]`, "not a JSON object"},
		{"no op", `{"after":` + dbzRow + `}`, "no op"},
		{"truncate", dbzEvent("t", "null", "null", dbzSrc), "truncate"},
		{"message", dbzEvent("m", "null", "null", dbzSrc), `op "m"`},
		{"update without after", dbzEvent("u", dbzRow, "null", dbzSrc), "after image"},
		{"delete without before", dbzEvent("d", "null", "null", dbzSrc), "before image"},
		{"no source", `{"op":"c","after":` + dbzRow + `}`, "source.lsn"},
		{"no lsn", dbzEvent("c", "null", dbzRow, `{"ts_ms":5}`), "source.lsn"},
		{"no ts_ms", dbzEvent("c", "null", dbzRow, `{"lsn":5}`), "source.ts_ms"},
		{"lsn as text", dbzEvent("c", "null", dbzRow, `{"lsn":"5","ts_ms":5}`), "debezium: "},
		{"payload not an object", `{"schema":{},"payload":[1]}`, "payload"},
		{"image not an object", dbzEvent("c", "null", `[1]`, dbzSrc), "not a JSON object"},
		{"upsert without a required column", dbzEvent("c", "null", dbzKeyRow, dbzSrc), `"customer"`},
		{"column of the wrong type", dbzEvent("c", "null", `{"order_id":"seven"}`, dbzSrc), "order_id"},
	}
	for _, c := range bad {
		// between two good values: the indexes map back to the values
		good := dbzEvent("c", "null", dbzRow, dbzSrc)
		d := dbzDecode(t, sc, false, [][]byte{[]byte(good), []byte(c.value), nil, []byte(good)})
		if len(d.Bad) != 1 || d.Bad[0].Index != 1 || !strings.Contains(d.Bad[0].Reason, c.reason) {
			t.Errorf("%s: bad = %+v, want value 1 rejected for %q", c.name, d.Bad, c.reason)
			continue
		}
		if len(d.Changes) != 2 || d.Rows.NumRows() != 2 || !slices.Equal(d.Skipped, []int{2}) {
			t.Errorf("%s: %d changes, %d rows, skipped %v; want 2, 2, [2]", c.name, len(d.Changes), d.Rows.NumRows(), d.Skipped)
		}
	}
}

// With evolve, the fields of the after images the schema lacks are new
// columns, as JSON objects' are.
func TestDebeziumNewColumns(t *testing.T) {
	after := `{"order_id":7,"customer":"x","status":"paid","order_day":20648,"updated_at":"2026-07-14T10:00:00Z","coupon":"SUMMER"}`
	d := dbzDecode(t, dbzSchema(t), true, [][]byte{[]byte(dbzEvent("c", "null", after, dbzSrc))})
	if len(d.NewColumns) != 1 || d.NewColumns[0].Name != "coupon" {
		t.Fatalf("NewColumns = %+v, want coupon", d.NewColumns)
	}
}

func TestChangeCompare(t *testing.T) {
	cases := []struct {
		a, b []int64
		want int
	}{
		{[]int64{1, 5}, []int64{2, 0}, -1},
		{[]int64{2, 5}, []int64{2, 5}, 0},
		{[]int64{2, 6}, []int64{2, 5}, 1},
		{[]int64{2}, []int64{2, 5}, -1},
		{nil, nil, 0},
	}
	for _, c := range cases {
		if got := (Change{Order: c.a}).Compare(Change{Order: c.b}); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := (Change{Order: c.b}).Compare(Change{Order: c.a}); got != -c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
	if Upsert.String() != "upsert" || Delete.String() != "delete" || Op(9).String() != "Op(9)" {
		t.Errorf("Op strings %s %s %s", Upsert, Delete, Op(9))
	}
}
