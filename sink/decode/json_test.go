package decode

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// ordersSchema is the Arrow schema of a table with a required id, a
// timestamp, a timestamptz and a date.
func ordersSchema(t *testing.T) *arrow.Schema {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 3, Name: "tstz", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 4, Name: "day", Type: iceberg.PrimitiveTypes.Date},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// messages are values as message bytes.
func messages(values ...string) [][]byte {
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = []byte(v)
	}
	return out
}

// Timestamps take RFC 3339 text with Z or an offset and up to nine
// fractional digits (truncated to microseconds) in both timestamp types,
// as well as integers in the column's unit; dates take YYYY-MM-DD.
func TestJSONTimestamps(t *testing.T) {
	at := time.Date(2026, 7, 14, 12, 30, 45, 123456000, time.UTC).UnixMicro()
	cases := []struct {
		value string
		want  int64 // microseconds since the epoch
	}{
		{`"2026-07-14T12:30:45.123456Z"`, at},
		{`"2026-07-14T12:30:45.123456789Z"`, at},
		{`"2026-07-14T14:30:45.123456+02:00"`, at},
		{`"2026-07-14T07:30:45.123456-05:00"`, at},
		{`"2026-07-14 12:30:45.123456Z"`, at},
		{`"2026-07-14T12:30:45.123456\u005a"`, at}, // an escape: the full parse
		{`"2026-07-14T12:30:45Z"`, at - 123456},
		{`"2026-07-14T12:30:45.1Z"`, at - 23456},
		{`"1969-12-31T23:59:59.9999999Z"`, -1},
		{`1784032245123456`, 1784032245123456},
	}
	dec := JSON(ordersSchema(t))
	var values []string
	for _, c := range cases {
		values = append(values, `{"id": "a", "ts"`+"\n :\t"+c.value+`, "tstz":`+c.value+`, "day": "2026-07-14"}`)
	}
	d, err := dec(messages(values...))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	if len(d.Bad) != 0 {
		t.Fatalf("rejected: %+v", d.Bad)
	}
	ts := d.Rows.Column(1).(*array.Timestamp)
	tstz := d.Rows.Column(2).(*array.Timestamp)
	day := d.Rows.Column(3).(*array.Date32)
	for i, c := range cases {
		if got := int64(ts.Value(i)); got != c.want || !ts.IsValid(i) {
			t.Errorf("timestamp %s = %d, want %d", c.value, got, c.want)
		}
		if got := int64(tstz.Value(i)); got != c.want || !tstz.IsValid(i) {
			t.Errorf("timestamptz %s = %d, want %d", c.value, got, c.want)
		}
		if got := day.Value(i).ToTime(); !got.Equal(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("date = %s, want 2026-07-14", got)
		}
	}
}

// A value that cannot be a row is rejected with its reason, never a
// crash nor a null; the others decode, in order.
func TestJSONRejects(t *testing.T) {
	dec := JSON(ordersSchema(t))
	values := []string{
		`{"id": "ok1", "ts": "2026-07-14T12:00:00Z"}`,
		`{"id": "bad json"`,
		`{"ts": "2026-07-14T12:00:00Z"}`,
		`{"id": null}`,
		`{"id": "bad ts", "ts": "yesterday"}`,
		`{"id": "bad tstz", "tstz": "2026-07-14T12:00:00"}`,
		`{"id": "bad date", "day": "14/07/2026"}`,
		`{"id": 7}`,
		`[1, 2]`,
		`null`,
		``,
		`{"id": "ok2", "extra": 1}`,
	}
	wantBad := map[int]string{1: "not a JSON object", 2: `required field "id" is missing or null`, 3: `required field "id" is missing or null`,
		4: `column "ts" (timestamp) cannot hold the JSON string "yesterday"`, 5: `column "tstz" (timestamptz) cannot hold the JSON string "2026-07-14T12:00:00"`,
		6: `column "day" (date) cannot hold the JSON string "14/07/2026"`, 7: `column "id" (string) cannot hold the JSON number 7`, 8: "not a JSON object", 9: "not a JSON object", 10: "not a JSON object"}
	d, err := dec(messages(values...))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	got := map[int]string{}
	for i, b := range d.Bad {
		if i > 0 && d.Bad[i-1].Index >= b.Index {
			t.Errorf("Bad not in order: %+v", d.Bad)
		}
		got[b.Index] = b.Reason
		t.Logf("%s: %s", values[b.Index], b.Reason)
	}
	for i, reason := range wantBad {
		r, ok := got[i]
		if !ok || !strings.Contains(r, reason) {
			t.Errorf("%s: rejected %v with %q, want a reason with %q", values[i], ok, r, reason)
		}
	}
	if len(got) != len(wantBad) {
		t.Errorf("rejected %d values, want %d: %+v", len(got), len(wantBad), d.Bad)
	}
	ids := d.Rows.Column(0).(*array.String)
	if d.Rows.NumRows() != 2 || ids.Value(0) != "ok1" || ids.Value(1) != "ok2" {
		t.Errorf("rows = %v, want ok1, ok2", d.Rows)
	}
}

// RFC 3339 text is taken for timestamps at any depth: in structs, lists,
// maps, and lists of structs.
func TestJSONNestedTimestamps(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "s", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 3, Name: "at", Type: iceberg.PrimitiveTypes.TimestampTz},
			{ID: 4, Name: "name", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 5, Name: "l", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.Timestamp}},
		iceberg.NestedField{ID: 7, Name: "m", Type: &iceberg.MapType{KeyID: 8, KeyType: iceberg.PrimitiveTypes.String, ValueID: 9, ValueType: iceberg.PrimitiveTypes.TimestampTz}},
		iceberg.NestedField{ID: 10, Name: "ls", Type: &iceberg.ListType{ElementID: 11, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 12, Name: "at", Type: iceberg.PrimitiveTypes.TimestampTz},
		}}}},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 14, 12, 30, 45, 123456000, time.UTC).UnixMicro()
	const ts = `"2026-07-14T14:30:45.123456789+02:00"`
	d, err := JSON(sc)(messages(
		`{"id":"a","s":{"at":`+ts+`,"name":"x"},"l":[`+ts+`,1],"m":[{"key":"k","value":`+ts+`}],"ls":[{"at":`+ts+`}]}`,
		`{"id":"b","s":{"at":"yesterday"}}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	if d.Rows.NumRows() != 1 || len(d.Bad) != 1 || d.Bad[0].Index != 1 {
		t.Fatalf("rows %d, bad %v", d.Rows.NumRows(), d.Bad)
	}
	s := d.Rows.Column(1).(*array.Struct).Field(0).(*array.Timestamp)
	l := d.Rows.Column(2).(*array.List).ListValues().(*array.Timestamp)
	m := d.Rows.Column(3).(*array.Map).Items().(*array.Timestamp)
	ls := d.Rows.Column(4).(*array.List).ListValues().(*array.Struct).Field(0).(*array.Timestamp)
	for name, got := range map[string]int64{"s.at": int64(s.Value(0)), "l[0]": int64(l.Value(0)), "l[1]": int64(l.Value(1)), "m[k]": int64(m.Value(0)), "ls[0].at": int64(ls.Value(0))} {
		want := at
		if name == "l[1]" {
			want = 1
		}
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

// With evolve, fields the schema lacks are reported with the type their
// values take; a field null in every message waits.
func TestJSONNewColumns(t *testing.T) {
	dec, err := JSONFormat()(ordersSchema(t), true)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dec(messages(
		`{"id":"a","n":1,"x":1,"s":"t","b":true,"o":{"k":1,"z":null},"arr":[1,2],"nul":null}`,
		`{"id":"b","x":1.5,"o":{"k2":"v"},"arr":[],"nul":null}`,
		`{"x":1,"rejected":1}`,    // no id: a reject, whose fields are not new columns
		`{"id":"c","":1,"a.b":2}`, // names no column takes as they are
	))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Rows.Release()
	got := map[string]string{}
	for _, c := range d.NewColumns {
		got[c.Name] = c.Type.String()
	}
	want := map[string]string{
		"n": "long", "x": "double", "s": "string", "b": "boolean", "arr": "list<long>",
	}
	for name, typ := range want {
		if got[name] != typ {
			t.Errorf("%s: %q, want %q", name, got[name], typ)
		}
	}
	if o := got["o"]; !strings.Contains(o, "k: optional long") || !strings.Contains(o, "k2: optional string") || strings.Contains(o, "z") {
		t.Errorf("o: %s", o)
	}
	if _, ok := got["nul"]; ok || len(got) != 6 {
		t.Errorf("new columns %v", got)
	}
	// Without evolve nothing is reported.
	d2, err := JSON(ordersSchema(t))(messages(`{"id":"a","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Rows.Release()
	if len(d2.NewColumns) > 0 || d2.Rows.NumRows() != 1 {
		t.Errorf("without evolve: %v", d2.NewColumns)
	}
}

// The evolve path of the adapter without a broker: the new columns a poll
// reports are added (nested types included), the poll is decoded again for
// the new schema, and the rows read back; a row committed before reads
// null in them.
func TestJSONNewColumnsIntoTable(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true})
	ident := catalogtest.CreateTable(t, cat, "events", sch, *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	sp := sink.SourcePartition{Source: "test", Partition: 0}
	decode := func(msgs [][]byte) Decoded {
		t.Helper()
		sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := JSONFormat()(sc, true)
		d, err := dec(msgs)
		if err != nil || len(d.Bad) > 0 {
			t.Fatal(err, d.Bad)
		}
		return d
	}
	d := decode(messages(`{"id":"a"}`))
	if err := s.Write(ctx, sp, []int64{0}, d.Rows); err != nil {
		t.Fatal(err)
	}
	d.Rows.Release()
	msgs := messages(`{"id":"b","n":1,"o":{"at":"2026-07-14T12:00:00Z","tags":["x"],"deep":{"f":1.5}},"l":[{"k":true}]}`)
	d = decode(msgs)
	d.Rows.Release()
	if len(d.NewColumns) != 3 {
		t.Fatalf("new columns %v", d.NewColumns)
	}
	if err := s.AddColumns(ctx, d.NewColumns...); err != nil {
		t.Fatal(err)
	}
	d = decode(msgs)
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
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"n": "(null) 1",
		"o": `(null) {"at":"2026-07-14T12:00:00Z","deep":{"f":1.5},"tags":["x"]}`,
		"l": `(null) [{"k":true}]`,
	} {
		if got := strings.Join(columnByID(t, tbl, name), " "); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// columnByID reads column name of every row, ordered by id. (It reads id
// too: iceberg-go v0.7.0 fails a scan that selects only a column older
// data files lack, "no leaf column readers matched col indices".)
func columnByID(t *testing.T, tbl *icetable.Table, name string) []string {
	t.Helper()
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", name)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(r.NumRows()); i++ {
			byID[r.Column(0).ValueStr(i)] = r.Column(1).ValueStr(i)
		}
		r.Release()
	}
	ids := slices.Sorted(maps.Keys(byID))
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}
