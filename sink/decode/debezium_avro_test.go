package decode

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
)

// The envelope schemas of testdata/debezium/avro are those Confluent's
// AvroConverter derives from the Kafka Connect schema of the PostgreSQL
// connector 3.6.1.Final's events (testdata/debezium/schema) for the
// orders table: 1.avsc, and 2.avsc whose Value has a column more
// (coupon, an optional string).
func dbzAvroSchemas(t testing.TB) map[int32]avro.Schema {
	t.Helper()
	schemas, err := LoadAvroSchemas(filepath.Join("testdata", "debezium", "avro"))
	if err != nil {
		t.Fatal(err)
	}
	return schemas
}

// dbzValue is the name of the Value record, which names its branch of
// the image unions.
const dbzValue = "icerun.public.orders.Value"

// dbzImage is an orders row as the connector writes it in Avro.
func dbzImage(id int64, customer, status string, amount *big.Rat, day int32, updated string) map[string]any {
	var a any
	if amount != nil {
		a = map[string]any{"bytes.decimal": amount}
	}
	return map[string]any{"order_id": id, "customer": customer, "status": status, "amount": a, "order_day": day, "updated_at": updated}
}

var (
	dbzAvroRow    = dbzImage(7, "x", "paid", big.NewRat(1, 1), 20648, "2026-07-14T10:00:00Z")
	dbzAvroKeyRow = dbzImage(7, "", "", nil, 0, "1970-01-01T00:00:00Z") // a delete's before: the key, zeros
)

// dbzAvroEvent is the Confluent-framed event of op with the images given
// (nil for null) at source lsn (nil for null) and ts_ms 5, written with
// schema id.
func dbzAvroEvent(t testing.TB, id uint32, op string, before, after map[string]any, lsn any) []byte {
	t.Helper()
	union := func(img map[string]any) any {
		if img == nil {
			return nil
		}
		return map[string]any{dbzValue: img}
	}
	if lsn != nil {
		lsn = map[string]any{"long": lsn}
	}
	source := map[string]any{
		"version": "3.6.1.Final", "connector": "postgresql", "name": "icerun", "ts_ms": int64(5),
		"snapshot": map[string]any{"string": "false"}, "db": "postgres", "sequence": nil, "ts_us": nil, "ts_ns": nil,
		"schema": "public", "table": "orders", "txId": map[string]any{"long": int64(700)}, "lsn": lsn,
		"xmin": nil, "origin": nil, "origin_lsn": nil,
	}
	ev := map[string]any{
		"before": union(before), "after": union(after), "source": source, "transaction": nil,
		"op": op, "ts_ms": map[string]any{"long": int64(6)}, "ts_us": nil, "ts_ns": nil,
	}
	return confluent(id, dbzMarshal(t, dbzAvroSchemas(t)[int32(id)], ev))
}

// dbzMarshal is mustAvro with an encoder cache of its own: hamba/avro
// caches the encoder of a union by its canonical form, in which the
// Value record is its name alone, so with the shared cache a datum of
// one envelope schema would be written with another's Value.
func dbzMarshal(t testing.TB, sch avro.Schema, v any) []byte {
	t.Helper()
	b, err := avro.Config{}.Freeze().Marshal(sch, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dbzJSON is the JSON image of an Avro one, for the JSON format.
func dbzJSON(img map[string]any) string {
	if img == nil {
		return "null"
	}
	amount := "null"
	if a, ok := img["amount"].(map[string]any); ok {
		amount = fmt.Sprintf("%q", a["bytes.decimal"].(*big.Rat).FloatString(2))
	}
	return fmt.Sprintf(`{"order_id":%d,"customer":%q,"status":%q,"amount":%s,"order_day":%d,"updated_at":%q}`,
		img["order_id"], img["customer"], img["status"], amount, img["order_day"], img["updated_at"])
}

// Every op decodes to the row, change and order the same event in
// Kafka Connect's JSON decodes to.
func TestDebeziumAvroEvents(t *testing.T) {
	sc := dbzSchema(t)
	f := DebeziumAvroConfluent(dbzAvroSchemas(t))
	for _, c := range []struct {
		name          string
		op            string
		before, after map[string]any
		want          string
	}{
		{"insert", "c", nil, dbzAvroRow, "upsert 7 x paid 1 2026-07-14 2026-07-14T10:00:00Z"},
		{"snapshot read", "r", nil, dbzAvroRow, "upsert 7 x paid 1 2026-07-14 2026-07-14T10:00:00Z"},
		{"update", "u", dbzImage(7, "x", "created", nil, 20647, "2026-07-13T10:00:00.123456Z"), dbzAvroRow, "upsert 7 x paid 1 2026-07-14 2026-07-14T10:00:00Z"},
		{"update without the before image", "u", nil, dbzImage(8, "y", "paid", nil, 20647, "2026-07-13T10:00:00.123456+02:00"), "upsert 8 y paid (null) 2026-07-13 2026-07-13T08:00:00.123456Z"},
		{"delete", "d", dbzAvroKeyRow, nil, "delete 7   (null) 1970-01-01 1970-01-01T00:00:00Z"},
	} {
		d := avroDecode(t, f, sc, false, dbzAvroEvent(t, 1, c.op, c.before, c.after, int64(100)))
		if len(d.Bad) != 0 || len(d.Changes) != 1 || d.Rows.NumRows() != 1 {
			t.Errorf("%s: bad %+v, %d changes, %d rows; want one change", c.name, d.Bad, len(d.Changes), d.Rows.NumRows())
			continue
		}
		if got := rowText(d, 0); got != c.want {
			t.Errorf("%s: row %q, want %q", c.name, got, c.want)
		}
		if got := d.Changes[0].Order; !slices.Equal(got, []int64{100, 5}) {
			t.Errorf("%s: Order = %v, want [100 5] (source.lsn, source.ts_ms)", c.name, got)
		}
		js := dbzDecode(t, sc, false, [][]byte{[]byte(dbzEvent(c.op, dbzJSON(c.before), dbzJSON(c.after), dbzSrc))})
		if got, want := rowText(d, 0), rowText(js, 0); got != want {
			t.Errorf("%s: Avro row %q, JSON row %q", c.name, got, want)
		}
	}
}

// Tombstones are skipped; an event that names no row, or a message that
// is no event, is a reject with the reason, and the values around it
// decode as usual.
func TestDebeziumAvroRejects(t *testing.T) {
	sc := dbzSchema(t)
	f := DebeziumAvroConfluent(dbzAvroSchemas(t))
	good := dbzAvroEvent(t, 1, "c", nil, dbzAvroRow, int64(100))
	for _, v := range [][]byte{nil, {}} {
		d := avroDecode(t, f, sc, false, v)
		if !slices.Equal(d.Skipped, []int{0}) || len(d.Bad) != 0 || d.Rows.NumRows() != 0 {
			t.Errorf("%q: skipped %v, bad %+v, %d rows; want skipped", v, d.Skipped, d.Bad, d.Rows.NumRows())
		}
	}
	plain := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"order_id","type":"long"}]}`)
	f3 := DebeziumAvroConfluent(map[int32]avro.Schema{1: dbzAvroSchemas(t)[1], 3: plain})
	bad := []struct {
		name  string
		value []byte
		want  string
	}{
		{"no source.lsn", dbzAvroEvent(t, 1, "c", nil, dbzAvroRow, nil), "source.lsn or source.ts_ms is missing"},
		{"unknown op", dbzAvroEvent(t, 1, "m", nil, dbzAvroRow, int64(1)), `op "m" is not c, r, u or d`},
		{"truncate", dbzAvroEvent(t, 1, "t", nil, nil, int64(1)), "truncate"},
		{"no op", dbzAvroEvent(t, 1, "", nil, dbzAvroRow, int64(1)), "no op"},
		{"update without after", dbzAvroEvent(t, 1, "u", dbzAvroRow, nil, int64(1)), "without the after image"},
		{"delete without before", dbzAvroEvent(t, 1, "d", nil, dbzAvroRow, int64(1)), "without the before image"},
		{"wrong magic byte", append([]byte{1}, good[1:]...), "not a Confluent Avro message"},
		{"unknown schema id", confluent(9, good[5:]), "unknown Avro schema id 9"},
		{"truncated", good[:len(good)-3], "debezium: "},
		{"image branch out of range", append(good[:5:5], append([]byte{0x06}, good[6:]...)...), "before: union branch 3 of 2"},
		{"not an envelope", confluent(3, mustAvro(t, plain, map[string]any{"order_id": int64(1)})), "not a change event envelope"},
		{"a bad column value", dbzAvroEvent(t, 1, "c", nil, dbzImage(7, "x", "paid", nil, 1, "yesterday"), int64(1)), `field "updated_at": "yesterday" is not an RFC 3339 timestamp`},
	}
	for _, c := range bad {
		d := avroDecode(t, f3, sc, false, good, c.value, nil, good)
		if len(d.Bad) != 1 || d.Bad[0].Index != 1 || !strings.Contains(d.Bad[0].Reason, c.want) {
			t.Errorf("%s: bad = %+v, want value 1 rejected for %q", c.name, d.Bad, c.want)
			continue
		}
		if len(d.Changes) != 2 || d.Rows.NumRows() != 2 || !slices.Equal(d.Skipped, []int{2}) {
			t.Errorf("%s: %d changes, %d rows, skipped %v; want 2, 2, [2]", c.name, len(d.Changes), d.Rows.NumRows(), d.Skipped)
		}
		for i := range 2 {
			if id := d.Rows.Column(0).ValueStr(i); id != "7" {
				t.Errorf("%s: row %d has order_id %s, want 7", c.name, i, id)
			}
		}
	}
}

// A Value schema with a column more (schema id 2) decodes with the
// table's columns; with evolve, its new field is a new column.
func TestDebeziumAvroEvolved(t *testing.T) {
	sc := dbzSchema(t)
	f := DebeziumAvroConfluent(dbzAvroSchemas(t))
	img := dbzImage(9, "z", "created", big.NewRat(5, 2), 20650, "2026-07-16T00:00:00Z")
	img["coupon"] = map[string]any{"string": "SUMMER"}
	values := [][]byte{dbzAvroEvent(t, 1, "c", nil, dbzAvroRow, int64(1)), dbzAvroEvent(t, 2, "c", nil, img, int64(2))}
	d := avroDecode(t, f, sc, false, values...)
	if len(d.Bad) != 0 || d.Rows.NumRows() != 2 || len(d.NewColumns) != 0 {
		t.Fatalf("bad %+v, %d rows, new columns %v; want 2 rows", d.Bad, d.Rows.NumRows(), d.NewColumns)
	}
	if got, want := rowText(d, 1), "upsert 9 z created 2.5 2026-07-16 2026-07-16T00:00:00Z"; got != want {
		t.Errorf("row of schema 2 = %q, want %q", got, want)
	}
	d = avroDecode(t, f, sc, true, values...)
	if len(d.NewColumns) != 1 || d.NewColumns[0].Name != "coupon" || d.NewColumns[0].Type.String() != "string" {
		t.Fatalf("NewColumns = %+v, want coupon string", d.NewColumns)
	}
}

// A table that declares _cdc_op, _cdc_lsn and _cdc_ts_ms gets each
// event's op and source position in them, deletes included; a source
// column named like one of them does not reach it.
func TestDebeziumAvroColumns(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: DebeziumOpColumn, Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: DebeziumLSNColumn, Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 5, Name: DebeziumTsColumn, Type: iceberg.PrimitiveTypes.Int64},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	values := [][]byte{
		dbzAvroEvent(t, 1, "r", nil, dbzAvroRow, int64(10)),
		dbzAvroEvent(t, 1, "u", nil, dbzAvroRow, int64(20)),
		nil,
		dbzAvroEvent(t, 1, "d", dbzAvroKeyRow, nil, int64(30)),
	}
	d := avroDecode(t, DebeziumAvroConfluent(dbzAvroSchemas(t)), sc, false, values...)
	if len(d.Bad) != 0 || d.Rows.NumRows() != 3 {
		t.Fatalf("bad %+v, %d rows; want 3", d.Bad, d.Rows.NumRows())
	}
	var got []string
	for i := range 3 {
		got = append(got, rowText(d, i))
	}
	want := []string{"upsert 7 paid r 10 5", "upsert 7 paid u 20 5", "delete 7  d 30 5"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}

	// The table's _cdc_op of the wrong type: every event is a reject.
	wrong := arrow.NewSchema(append(sc.Fields()[:2:2], arrow.Field{Name: DebeziumOpColumn, Type: arrow.PrimitiveTypes.Int32, Nullable: true}), nil)
	d = avroDecode(t, DebeziumAvroConfluent(dbzAvroSchemas(t)), wrong, false, values[0])
	if len(d.Bad) != 1 || !strings.Contains(d.Bad[0].Reason, DebeziumOpColumn) {
		t.Errorf("_cdc_op int: bad %+v, want a reject naming it", d.Bad)
	}
}

// A delete's image names its key: a required column it has null (a
// nullable source column under the default replica identity) does not
// make it a reject, while an upsert with it null is one.
func TestDebeziumAvroDeleteKeyOnly(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "debezium", "avro", "1.avsc"))
	if err != nil {
		t.Fatal(err)
	}
	nullable := strings.Replace(string(b), `"name": "status",
       "type": "string"`, `"name": "status",
       "type": ["null", "string"]`, 1)
	if nullable == string(b) {
		t.Fatal("no status field in 1.avsc")
	}
	w := avro.MustParse(nullable)
	img := func(status any) map[string]any {
		m := dbzImage(7, "x", "", nil, 0, "1970-01-01T00:00:00Z")
		m["status"] = status
		return map[string]any{dbzValue: m}
	}
	ev := func(op string, before, after any) []byte {
		return dbzMarshal(t, w, map[string]any{
			"before": before, "after": after, "op": op, "transaction": nil, "ts_ms": nil, "ts_us": nil, "ts_ns": nil,
			"source": map[string]any{"version": "v", "connector": "postgresql", "name": "n", "ts_ms": int64(5), "snapshot": nil,
				"db": "d", "sequence": nil, "ts_us": nil, "ts_ns": nil, "schema": "public", "table": "orders", "txId": nil,
				"lsn": map[string]any{"long": int64(3)}, "xmin": nil, "origin": nil, "origin_lsn": nil},
		})
	}
	d := avroDecode(t, DebeziumAvro(w), dbzSchema(t), false, ev("d", img(nil), nil), ev("c", nil, img(nil)), ev("c", nil, img(map[string]any{"string": "paid"})))
	if len(d.Bad) != 1 || d.Bad[0].Index != 1 || !strings.Contains(d.Bad[0].Reason, `required field "status" is null`) {
		t.Fatalf("bad %+v, want the upsert with a null status rejected", d.Bad)
	}
	if d.Rows.NumRows() != 2 || d.Changes[0].Op != Delete || !d.Rows.Column(2).IsNull(0) {
		t.Errorf("%d rows, first change %v; want the delete with a null status, then the upsert", d.Rows.NumRows(), d.Changes[0].Op)
	}
}

// Debezium's semantic types of time go into the columns of their kind.
func TestDebeziumAvroConnectTypes(t *testing.T) {
	w := avro.MustParse(`{"type":"record","name":"R","fields":[
 {"name":"ts","type":{"type":"long","connect.name":"io.debezium.time.Timestamp"}},
 {"name":"micro","type":{"type":"long","connect.name":"io.debezium.time.MicroTimestamp"}},
 {"name":"nano","type":{"type":"long","connect.name":"io.debezium.time.NanoTimestamp"}},
 {"name":"t","type":{"type":"int","connect.name":"io.debezium.time.Time"}},
 {"name":"mt","type":{"type":"long","connect.name":"io.debezium.time.MicroTime"}},
 {"name":"u","type":{"type":"string","connect.name":"io.debezium.data.Uuid"}},
 {"name":"day_as_long","type":{"type":"int","connect.name":"io.debezium.time.Date"}}]}`)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 2, Name: "micro", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "nano", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 4, Name: "t", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 5, Name: "mt", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 6, Name: "u", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 7, Name: "day_as_long", Type: iceberg.PrimitiveTypes.Int64},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	d := avroDecode(t, Avro(w), sc, false, mustAvro(t, w, map[string]any{
		"ts": int64(1_000), "micro": int64(1_000_000), "nano": int64(1_500_000_000), "t": int32(1_000), "mt": int64(2_000_000),
		"u": "6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f", "day_as_long": int32(3),
	}))
	if len(d.Bad) != 0 {
		t.Fatal(d.Bad)
	}
	for i, want := range []string{"1970-01-01T00:00:01", "1970-01-01T00:00:01Z", "1970-01-01T00:00:01.5", "00:00:01.000000", "00:00:02.000000", "6f1c7a1e-8c1b-4a3b-9d55-0b3c2a1d9e7f", "3"} {
		if got := d.Rows.Column(i).ValueStr(0); got != want {
			t.Errorf("%s = %s, want %s", sc.Field(i).Name, got, want)
		}
	}
	if ts := d.Rows.Column(0).(*array.Timestamp).Value(0); ts != 1_000_000 {
		t.Errorf("ts = %d µs, want 1000000 (milliseconds converted)", ts)
	}
}
