package decode

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// avroTable is the Arrow schema of a table with a column of every kind
// the Avro decoder maps.
func avroTable(t testing.TB) *arrow.Schema {
	t.Helper()
	sc, err := icetable.SchemaToArrowSchema(avroIceberg(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func avroIceberg() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 3, Name: "i", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "price", Type: iceberg.DecimalTypeOf(10, 2)},
		iceberg.NestedField{ID: 5, Name: "at", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 6, Name: "local", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 7, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 8, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 9, Name: "tags", Type: &iceberg.ListType{ElementID: 17, Element: iceberg.PrimitiveTypes.String}},
		iceberg.NestedField{ID: 10, Name: "attrs", Type: &iceberg.MapType{KeyID: 18, KeyType: iceberg.PrimitiveTypes.String, ValueID: 19, ValueType: iceberg.PrimitiveTypes.Int64}},
		iceberg.NestedField{ID: 11, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 12, Name: "city", Type: iceberg.PrimitiveTypes.String},
			{ID: 13, Name: "zip", Type: iceberg.PrimitiveTypes.Int32},
		}}},
		iceberg.NestedField{ID: 14, Name: "ratio", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 15, Name: "kind", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 16, Name: "renamed", Type: iceberg.PrimitiveTypes.String},
	)
}

// avroWriter is a writer schema for avroTable: "old_name" maps to column
// renamed by its field-id, "extra" is a field the table lacks.
const avroWriter = `{"type":"record","name":"Order","fields":[
 {"name":"id","type":["null","string"]},
 {"name":"extra","type":{"type":"array","items":{"type":"record","name":"Skip","fields":[{"name":"a","type":"long"},{"name":"b","type":{"type":"map","values":"string"}}]}}},
 {"name":"n","type":["null","long","string"]},
 {"name":"i","type":"int"},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"local","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"u","type":{"type":"string","logicalType":"uuid"}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":["null",{"type":"map","values":"long"}]},
 {"name":"addr","type":["null",{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"},{"name":"zip","type":"int"}]}]},
 {"name":"ratio","type":"float"},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
 {"name":"old_name","type":"string","field-id":16}
]}`

var avroAt = time.Date(2026, 7, 14, 12, 30, 45, 123000000, time.UTC)

func avroOrder(id any, n any) map[string]any {
	return map[string]any{
		"id": id, "n": n, "i": 7,
		"extra":    []any{map[string]any{"a": int64(1), "b": map[string]any{"k": "v"}}},
		"price":    big.NewRat(12345, 100),
		"at":       avroAt,
		"local":    avroAt,
		"day":      time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC),
		"u":        "6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f",
		"tags":     []any{"x", "y"},
		"attrs":    map[string]any{"map": map[string]any{"k": int64(3)}},
		"addr":     map[string]any{"Addr": map[string]any{"city": "Lyon", "zip": 69001}},
		"ratio":    float32(0.5),
		"kind":     "B",
		"old_name": "by id",
	}
}

func mustAvro(t testing.TB, sch avro.Schema, v any) []byte {
	t.Helper()
	b, err := avro.Marshal(sch, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func confluent(id uint32, datum []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], id)
	return append(out, datum...)
}

func avroDecode(t *testing.T, f Format, sc *arrow.Schema, evolve bool, values ...[]byte) Decoded {
	t.Helper()
	dec, err := f(sc, evolve)
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

// Every logical type, nested records, arrays, maps, unions with null,
// enums, a field mapped by its field-id and one the table lacks.
func TestAvroTypes(t *testing.T) {
	w := avro.MustParse(avroWriter)
	sc := avroTable(t)
	d := avroDecode(t, Avro(w), sc, false, mustAvro(t, w, avroOrder("o1", int64(5))))
	if len(d.Bad) > 0 || d.Rows.NumRows() != 1 || len(d.NewColumns) > 0 {
		t.Fatalf("bad %v, rows %d, new %v", d.Bad, d.Rows.NumRows(), d.NewColumns)
	}
	col := func(name string) arrow.Array { return d.Rows.Column(sc.FieldIndices(name)[0]) }
	checks := map[string]string{
		"id": "o1", "n": "5", "i": "7", "price": "123.45", "kind": "B", "renamed": "by id", "ratio": "0.5",
		"u": "6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f", "day": "2026-07-14",
	}
	for name, want := range checks {
		if got := col(name).ValueStr(0); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := int64(col("at").(*array.Timestamp).Value(0)); got != avroAt.UnixMicro() {
		t.Errorf("at = %d, want %d (millis to micros)", got, avroAt.UnixMicro())
	}
	if got := int64(col("local").(*array.Timestamp).Value(0)); got != avroAt.UnixMicro() {
		t.Errorf("local = %d, want %d", got, avroAt.UnixMicro())
	}
	if _, ok := col("u").(*extensions.UUIDArray); !ok {
		t.Errorf("u is %T", col("u"))
	}
	for name, want := range map[string]string{"tags": `["x","y"]`, "attrs": `[{"key":"k","value":3}]`, "addr": `{"city":"Lyon","zip":69001}`} {
		got, err := col(name).(interface{ GetOneForMarshal(int) any }).GetOneForMarshal(0), error(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := jsonMarshal(got)
		if string(b) != want {
			t.Errorf("%s = %s, want %s", name, b, want)
		}
	}
}

// A message that does not decode or does not fit is rejected with the
// reason; the messages around it decode as usual.
func TestAvroRejects(t *testing.T) {
	w := avro.MustParse(avroWriter)
	sc := avroTable(t)
	good := func(id string) []byte { return mustAvro(t, w, avroOrder(id, int64(1))) }
	full := good("x")
	values := [][]byte{
		good("a"),
		full[:len(full)-3],                       // truncated
		mustAvro(t, w, avroOrder(nil, int64(1))), // required id null
		good("b"),
		mustAvro(t, w, avroOrder("c", "not a long")), // a union branch that does not fit
		good("d"),
	}
	d := avroDecode(t, Avro(w), sc, false, values...)
	wantBad := map[int]string{1: "", 2: `required field "id" is null`, 4: `field "n"`}
	if len(d.Bad) != len(wantBad) {
		t.Fatalf("bad = %v, want indices 1, 2, 4", d.Bad)
	}
	for _, b := range d.Bad {
		want, ok := wantBad[b.Index]
		if !ok || !strings.Contains(b.Reason, want) || b.Reason == "" {
			t.Errorf("rejected %d: %q, want it to contain %q", b.Index, b.Reason, want)
		}
	}
	ids := d.Rows.Column(0).(*array.String)
	var got []string
	for i := 0; i < ids.Len(); i++ {
		got = append(got, ids.Value(i))
	}
	if strings.Join(got, ",") != "a,b,d" {
		t.Errorf("rows %v, want a,b,d", got)
	}
	// Every column has the rows' length (the builders of a failed
	// message were rebuilt).
	for i, c := range d.Rows.Columns() {
		if c.Len() != 3 {
			t.Errorf("column %s has %d values", sc.Field(i).Name, c.Len())
		}
	}
}

// Confluent framing: the schema id picks the writer schema; an unknown id
// or a missing magic byte rejects the message.
func TestAvroConfluent(t *testing.T) {
	dir := t.TempDir()
	v2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"n","type":"long"}]}`
	if err := os.WriteFile(filepath.Join(dir, "1.avsc"), []byte(avroWriter), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "2.avsc"), []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	schemas, err := LoadAvroSchemas(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := avroDecode(t, AvroConfluent(schemas), avroTable(t), false,
		confluent(1, mustAvro(t, schemas[1], avroOrder("a", int64(1)))),
		confluent(2, mustAvro(t, schemas[2], map[string]any{"id": "b", "n": int64(2)})),
		confluent(3, mustAvro(t, schemas[2], map[string]any{"id": "c", "n": int64(3)})),
		mustAvro(t, schemas[2], map[string]any{"id": "d", "n": int64(4)}),
	)
	if d.Rows.NumRows() != 2 || len(d.Bad) != 2 || !strings.Contains(d.Bad[0].Reason, "unknown Avro schema id 3") || !strings.Contains(d.Bad[1].Reason, "not a Confluent") {
		t.Fatalf("rows %d, bad %v", d.Rows.NumRows(), d.Bad)
	}
	if got := d.Rows.Column(1).ValueStr(1); got != "2" {
		t.Errorf("n of the v2 message = %s", got)
	}
}

// A writer schema that cannot be rows of the table (a required column
// missing, a field of another type) rejects its messages, with the reason.
func TestAvroSchemaDoesNotFit(t *testing.T) {
	sc := avroTable(t)
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"record","name":"R","fields":[{"name":"n","type":"long"}]}`, `required field "id" is missing`},
		{`{"type":"record","name":"R","fields":[{"name":"id","type":"string"},{"name":"n","type":"string"}]}`, `field "n": Avro type`},
		{`{"type":"record","name":"R","fields":[{"name":"id","type":"string"},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":3}}]}`, `decimal(9,3)`},
		{`"string"`, "not a record"},
	} {
		w := avro.MustParse(tc.schema)
		var v any = "x"
		if rs, ok := w.(*avro.RecordSchema); ok {
			m := map[string]any{}
			for _, f := range rs.Fields() {
				m[f.Name()] = map[string]any{"long": int64(1), "string": "s"}[string(f.Type().Type())]
				if f.Name() == "price" {
					m[f.Name()] = big.NewRat(1, 1)
				}
			}
			v = m
		}
		d := avroDecode(t, Avro(w), sc, false, mustAvro(t, w, v))
		if len(d.Bad) != 1 || !strings.Contains(d.Bad[0].Reason, tc.want) {
			t.Errorf("%s: bad %v, want %q", tc.schema, d.Bad, tc.want)
		}
	}
}

// With evolve, writer fields the table lacks are reported with their
// Iceberg type.
func TestAvroNewColumns(t *testing.T) {
	w := avro.MustParse(avroWriter)
	d := avroDecode(t, Avro(w), avroTable(t), true, mustAvro(t, w, avroOrder("a", int64(1))))
	if len(d.NewColumns) != 1 || d.NewColumns[0].Name != "extra" {
		t.Fatalf("new columns %v", d.NewColumns)
	}
	want := "list<struct<1: a: optional long, 2: b: optional map<string, string>>>"
	if got := d.NewColumns[0].Type.String(); !strings.Contains(got, "list<struct<") || !strings.Contains(got, "map<string, string>") {
		t.Errorf("type %s, want like %s", got, want)
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// Avro rows of every type go through the sink into a table of a SQLite
// catalog and read back as they were sent.
func TestAvroIntoTable(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", avroIceberg(), *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	// The catalog assigned its own field ids: the writer names renamed's.
	f, _ := s.Table().Schema().FindFieldByName("renamed")
	w := avro.MustParse(strings.Replace(avroWriter, `"field-id":16`, fmt.Sprintf(`"field-id":%d`, f.ID), 1))
	d := avroDecode(t, Avro(w), sc, false, mustAvro(t, w, avroOrder("o1", int64(5))), mustAvro(t, w, avroOrder("o2", nil)))
	if len(d.Bad) > 0 {
		t.Fatal(d.Bad)
	}
	sp := sink.SourcePartition{Source: "test", Partition: 0}
	if err := s.Write(ctx, sp, []int64{0, 1}, d.Rows); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"id": "o1 o2", "n": "(null) 5", "price": "123.45 123.45", "kind": "B B", "renamed": "by id by id",
		"u":   "6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f 6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f",
		"day": "2026-07-14 2026-07-14", "at": "2026-07-14T12:30:45.123Z 2026-07-14T12:30:45.123Z",
		"local": "2026-07-14T12:30:45.123 2026-07-14T12:30:45.123",
	} {
		if got := strings.Join(column(t, tbl, name), " "); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"tags", "attrs", "addr"} {
		if got := column(t, tbl, name); len(got) != 2 || got[0] != got[1] || !strings.ContainsAny(got[0], "xkL") {
			t.Errorf("%s = %q", name, got)
		}
	}
}

// Corrupt datums (every prefix of a good one, and bytes flipped in it)
// are rejects or rows, never a panic or an error of the decoder.
func TestAvroCorruptDatums(t *testing.T) {
	w := avro.MustParse(avroWriter)
	good := mustAvro(t, w, avroOrder("o1", int64(5)))
	var values [][]byte
	for n := range len(good) {
		values = append(values, good[:n])
	}
	for i := range good {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			v := append([]byte(nil), good...)
			v[i] ^= x
			values = append(values, v)
		}
	}
	d := avroDecode(t, Avro(w), avroTable(t), true, values...)
	if int(d.Rows.NumRows())+len(d.Bad) != len(values) {
		t.Fatalf("%d rows + %d rejects for %d datums", d.Rows.NumRows(), len(d.Bad), len(values))
	}
	for _, c := range d.Rows.Columns() {
		if int64(c.Len()) != d.Rows.NumRows() {
			t.Fatalf("a column of %d values in %d rows", c.Len(), d.Rows.NumRows())
		}
	}
	t.Logf("%d datums: %d rows, %d rejects", len(values), d.Rows.NumRows(), len(d.Bad))
}
