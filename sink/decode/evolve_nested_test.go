package decode

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// nestedIceberg is a table with a struct column, a list of structs and a
// map of structs.
func nestedIceberg() *iceberg.Schema {
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "city", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 4, Name: "items", Type: &iceberg.ListType{ElementID: 5, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "sku", Type: iceberg.PrimitiveTypes.String},
		}}}},
		iceberg.NestedField{ID: 7, Name: "attrs", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 10, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
		}}}},
	)
}

// evolvingSink opens a sink on a new nestedIceberg table and returns a
// decode of values in format f for the table's current schema, with
// evolve.
func evolvingSink(t *testing.T, f Format) (*sink.Sink, func(msgs [][]byte) Decoded) {
	t.Helper()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "nested", nestedIceberg(), *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	return s, func(msgs [][]byte) Decoded {
		t.Helper()
		sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := f(sc, true)
		if err != nil {
			t.Fatal(err)
		}
		d, err := dec(msgs)
		if err != nil || len(d.Bad) > 0 {
			t.Fatal(err, d.Bad)
		}
		return d
	}
}

// fieldIDs are the field ids in a type's text (placeholders in a new
// column's type).
var fieldIDs = regexp.MustCompile(`\d+: `)

// evolveNested writes first (decoded for the table as created), then
// second, whose values hold fields inside the nested columns the table
// lacks: they are reported as new, added by AddColumns, and the values
// decoded again fill them; the table is read back by id (column name ->
// "first second" values).
func evolveNested(t *testing.T, f Format, first, second [][]byte, wantNew string) map[string]string {
	t.Helper()
	ctx := context.Background()
	s, decode := evolvingSink(t, f)
	sp := sink.SourcePartition{Source: "test", Partition: 0}
	d := decode(first)
	if len(d.NewColumns) > 0 {
		t.Fatalf("new columns in the first values: %v", d.NewColumns)
	}
	if err := s.Write(ctx, sp, []int64{0}, d.Rows); err != nil {
		t.Fatal(err)
	}
	d.Rows.Release()
	d = decode(second)
	d.Rows.Release()
	var got []string
	for _, c := range d.NewColumns {
		got = append(got, c.Name+" "+fieldIDs.ReplaceAllString(c.Type.String(), ""))
	}
	if g := strings.Join(got, "; "); g != wantNew {
		t.Errorf("new columns:\n%s\nwant\n%s", g, wantNew)
	}
	if err := s.AddColumns(ctx, d.NewColumns...); err != nil {
		t.Fatal(err)
	}
	d = decode(second)
	defer d.Rows.Release()
	if len(d.NewColumns) > 0 {
		t.Fatalf("new columns again: %v", d.NewColumns)
	}
	if err := s.Write(ctx, sp, []int64{1}, d.Rows); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range []string{"addr", "items", "attrs"} {
		out[name] = strings.Join(columnByID(t, s.Table(), name), " ")
	}
	return out
}

// With evolve, a JSON field inside an object of a struct column (also
// inside a list of structs) the table lacks becomes an optional field of
// that struct; the rows before read null in it. A message the decoder
// rejects adds nothing, and a field the table has, with a value of
// another type, is not new: the message is rejected.
func TestJSONNewNestedFieldsIntoTable(t *testing.T) {
	got := evolveNested(t, JSONFormat(),
		messages(`{"id":"a","addr":{"city":"Lyon"},"items":[{"sku":"s1"}]}`),
		messages(`{"id":"b","addr":{"city":"Paris","zip":75001,"geo":{"lat":48.85}},"items":[{"sku":"s2","qty":2}],"attrs":[{"key":"k","value":{"v":1,"w":true}}]}`),
		"addr struct<geo: optional struct<lat: optional double>, zip: optional long>; items list<struct<qty: optional long>>")
	for name, want := range map[string]string{
		"addr":  `{"city":"Lyon","geo":null,"zip":null} {"city":"Paris","geo":{"lat":48.85},"zip":75001}`,
		"items": `[{"qty":null,"sku":"s1"}] [{"qty":2,"sku":"s2"}]`,
		"attrs": `(null) [{"key":"k","value":{"v":1}}]`,
	} {
		if got[name] != want {
			t.Errorf("%s = %s, want %s", name, got[name], want)
		}
	}

	sc, err := icetable.SchemaToArrowSchema(nestedIceberg(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := JSONFormat()(sc, true)
	d, err := dec(messages(`{"id":"c","addr":{"city":7,"zip":1}}`, `{"id":"d","addr":"Lyon"}`, `{"id":"e","addr":{"city":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	if len(d.Bad) != 2 || len(d.NewColumns) != 0 {
		t.Errorf("bad %v, new columns %v; want 2 rejects and no new column (a reject's addr.zip is not added)", d.Bad, d.NewColumns)
	}
}

// With evolve, a field of an Avro writer's record inside a struct column
// (also a list's element or a map's value) the table lacks becomes an
// optional field of that struct.
func TestAvroNewNestedFieldsIntoTable(t *testing.T) {
	w1 := avro.MustParse(`{"type":"record","name":"R","fields":[
 {"name":"id","type":"string"},
 {"name":"addr","type":["null",{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}]},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"}]}}},
 {"name":"attrs","type":{"type":"map","values":{"type":"record","name":"Attr","fields":[{"name":"v","type":"long"}]}}}
]}`)
	w2 := avro.MustParse(`{"type":"record","name":"R","fields":[
 {"name":"id","type":"string"},
 {"name":"addr","type":["null",{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"},{"name":"zip","type":"int"},
   {"name":"geo","type":["null",{"type":"record","name":"Geo","fields":[{"name":"lat","type":"double"}]}]}]}]},
 {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[{"name":"sku","type":"string"},{"name":"qty","type":"long"}]}}},
 {"name":"attrs","type":{"type":"map","values":{"type":"record","name":"Attr","fields":[{"name":"v","type":"long"},{"name":"w","type":"boolean"}]}}}
]}`)
	first := confluent(1, mustAvro(t, w1, map[string]any{
		"id": "a", "addr": map[string]any{"Addr": map[string]any{"city": "Lyon"}},
		"items": []any{map[string]any{"sku": "s1"}}, "attrs": map[string]any{"k": map[string]any{"v": int64(1)}},
	}))
	second := confluent(2, mustAvro(t, w2, map[string]any{
		"id": "b", "addr": map[string]any{"Addr": map[string]any{"city": "Paris", "zip": 75001, "geo": map[string]any{"Geo": map[string]any{"lat": 48.85}}}},
		"items": []any{map[string]any{"sku": "s2", "qty": int64(2)}}, "attrs": map[string]any{"k": map[string]any{"v": int64(2), "w": true}},
	}))
	got := evolveNested(t, AvroConfluent(map[int32]avro.Schema{1: w1, 2: w2}), [][]byte{first}, [][]byte{second},
		"addr struct<zip: optional int, geo: optional struct<lat: optional double>>; items list<struct<qty: optional long>>; attrs map<string, struct<w: optional boolean>>")
	for name, want := range map[string]string{
		"addr":  `{"city":"Lyon","geo":null,"zip":null} {"city":"Paris","geo":{"lat":48.85},"zip":75001}`,
		"items": `[{"qty":null,"sku":"s1"}] [{"qty":2,"sku":"s2"}]`,
		"attrs": `[{"key":"k","value":{"v":1,"w":null}}] [{"key":"k","value":{"v":2,"w":true}}]`,
	} {
		if got[name] != want {
			t.Errorf("%s = %s, want %s", name, got[name], want)
		}
	}
}

// A writer's nested field mapped to a struct field by its field-id is
// not new under its own name: only the fields the decoder cannot map are.
func TestAvroNestedFieldByIDIsNotNew(t *testing.T) {
	sc, err := icetable.SchemaToArrowSchema(nestedIceberg(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	w := avro.MustParse(`{"type":"record","name":"R","fields":[
 {"name":"id","type":"string"},
 {"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"town","type":"string","field-id":3},{"name":"zip","type":"int"}]}}
]}`)
	d := avroDecode(t, Avro(w), sc, true, mustAvro(t, w, map[string]any{"id": "a", "addr": map[string]any{"town": "Lyon", "zip": 69001}}))
	if len(d.NewColumns) != 1 || d.NewColumns[0].Name != "addr" || fieldIDs.ReplaceAllString(d.NewColumns[0].Type.String(), "") != "struct<zip: optional int>" {
		t.Errorf("new columns %v, want addr.zip only", d.NewColumns)
	}
	addr := d.Rows.Column(1).(*array.Struct)
	if got := addr.Field(0).ValueStr(0); got != "Lyon" {
		t.Errorf("addr.city = %q, want the value of town", got)
	}
}
