//go:build interop

package interop

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// The writer schemas of TestSinkEvolvedByAvro, by Confluent id: 2 adds
// four fields, 3 a field and fields inside the records device and geo.
var evolvingWriters = map[int32]string{
	1: `{"type":"record","name":"E","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"device","type":["null",{"type":"record","name":"Device","fields":[{"name":"model","type":["null","string"]}]}]}]}`,
	2: `{"type":"record","name":"E","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"device","type":["null",{"type":"record","name":"Device","fields":[{"name":"model","type":["null","string"]}]}]},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"seen_at","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"geo","type":["null",{"type":"record","name":"Geo","fields":[{"name":"lat","type":"double"},{"name":"lon","type":"double"}]}]}]}`,
	3: `{"type":"record","name":"E","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"device","type":["null",{"type":"record","name":"Device","fields":[{"name":"model","type":["null","string"]},{"name":"os","type":["null","string"]}]}]},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"seen_at","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"geo","type":["null",{"type":"record","name":"Geo","fields":[{"name":"lat","type":"double"},{"name":"lon","type":"double"},{"name":"alt","type":["null","double"]}]}]},
 {"name":"note","type":["null","string"]}]}`,
}

// avroEvent is one message of TestSinkEvolvedByAvro: its writer schema id
// and values (a nil pointer a null; fields the writer lacks unused).
type avroEvent struct {
	schema int32
	seq    int64
	at     time.Time
	model  *string
	os     *string
	cents  int64
	seen   time.Time
	tags   []string
	geo    *[3]float64 // lat, lon, alt
	noAlt  bool
	note   *string
}

// datum is e in the Confluent framing.
func (e avroEvent) datum(t *testing.T, w avro.Schema) []byte {
	t.Helper()
	opt := func(s *string) any {
		if s == nil {
			return nil
		}
		return *s
	}
	v := map[string]any{"id": fmt.Sprintf("a-%d", e.seq), "seq": e.seq, "event_time": e.at, "device": nil}
	if e.model != nil || e.os != nil {
		dev := map[string]any{"model": opt(e.model)}
		if e.schema >= 3 {
			dev["os"] = opt(e.os)
		}
		v["device"] = map[string]any{"Device": dev}
	}
	if e.schema >= 2 {
		tags := make([]any, len(e.tags))
		for i, s := range e.tags {
			tags[i] = s
		}
		v["amount"], v["seen_at"], v["tags"], v["geo"] = big.NewRat(e.cents, 100), e.seen, tags, nil
		if e.geo != nil {
			geo := map[string]any{"lat": e.geo[0], "lon": e.geo[1]}
			if e.schema >= 3 {
				geo["alt"] = e.geo[2]
				if e.noAlt {
					geo["alt"] = nil
				}
			}
			v["geo"] = map[string]any{"Geo": geo}
		}
	}
	if e.schema >= 3 {
		v["note"] = opt(e.note)
	}
	b, err := avro.Marshal(w, v)
	if err != nil {
		t.Fatalf("message %d: %v", e.seq, err)
	}
	out := make([]byte, 5, 5+len(b))
	binary.BigEndian.PutUint32(out[1:], uint32(e.schema))
	return append(out, b...)
}

// row is the row e lands as in the final table: null in what its writer
// schema lacks.
func (e avroEvent) row() Row {
	str := func(s *string) any {
		if s == nil {
			return "null"
		}
		return "s:" + *s
	}
	r := Row{
		"id": fmt.Sprintf("s:a-%d", e.seq), "seq": fmt.Sprintf("i:%d", e.seq), "event_time": fmt.Sprintf("ts:%d", e.at.UnixMicro()),
		"device": "null", "amount": "null", "seen_at": "null", "tags": "null", "geo": "null", "note": str(e.note),
	}
	if e.model != nil || e.os != nil {
		r["device"] = map[string]any{"model": str(e.model), "os": str(e.os)}
	}
	if e.schema >= 2 {
		tags := []any{}
		for _, s := range e.tags {
			tags = append(tags, "s:"+s)
		}
		r["amount"] = "d:" + big.NewRat(e.cents, 100).FloatString(2)
		r["seen_at"], r["tags"] = fmt.Sprintf("ts:%d", e.seen.UnixMicro()), tags
		if e.geo != nil {
			alt := "null"
			if e.schema >= 3 && !e.noAlt {
				alt = Float(e.geo[2])
			}
			r["geo"] = map[string]any{"lat": Float(e.geo[0]), "lon": Float(e.geo[1]), "alt": alt}
		}
	}
	return r
}

// TestSinkEvolvedByAvro streams Confluent-framed Avro messages through
// the sink/decode decoder with evolve, as the Kafka adapter does: a poll
// whose decoder reports new columns adds them (sink.AddColumns) and is
// decoded again. The writers gain a decimal, a timestamptz, a list and a
// struct, then a string and fields inside both struct columns; one poll
// mixes two writer schemas. Spark and PyIceberg read exactly the rows
// sent, null in what a row's writer lacked, in full and filtered scans.
func TestSinkEvolvedByAvro(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) { runSinkEvolvedByAvro(t, e, c) })
}

func runSinkEvolvedByAvro(t *testing.T, e *Engines, c *Catalog) {
	ctx := context.Background()
	name := "sink_evolved_avro"
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "device", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "model", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	c.CreateTable(t, name, sch, spec, nil)
	writers := map[int32]avro.Schema{}
	for id, text := range evolvingWriters {
		writers[id] = avro.MustParse(text)
	}
	format := decode.AvroConfluent(writers)
	s, err := sink.Open(ctx, c.Cat, c.Ident(name), sink.WithCommitRows(1_000_000), sink.WithCommitInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	from := sink.SourcePartition{Source: "kafka:evolving", Partition: 0}
	decodePoll := func(values [][]byte) decode.Decoded {
		t.Helper()
		sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := format(sc, true)
		if err != nil {
			t.Fatal(err)
		}
		d, err := dec(values)
		if err != nil || len(d.Bad) > 0 {
			t.Fatalf("decode: %v %v", err, d.Bad)
		}
		return d
	}
	var want []Row
	var changes []string
	poll := func(events ...avroEvent) {
		t.Helper()
		values := make([][]byte, len(events))
		offs := make([]int64, len(events))
		for i, ev := range events {
			values[i] = ev.datum(t, writers[ev.schema])
			offs[i] = ev.seq
			want = append(want, ev.row())
		}
		d := decodePoll(values)
		if len(d.NewColumns) > 0 {
			d.Rows.Release()
			for _, col := range d.NewColumns {
				changes = append(changes, col.Name+" "+col.Type.String())
			}
			if err := s.AddColumns(ctx, d.NewColumns...); err != nil {
				t.Fatal(err)
			}
			if d = decodePoll(values); len(d.NewColumns) > 0 {
				t.Fatalf("new columns after adding them: %v", d.NewColumns)
			}
		}
		defer d.Rows.Release()
		if err := s.Write(ctx, from, offs, d.Rows); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	day := func(d, h int) time.Time { return sinkDay0.Add(time.Duration(24*d+h) * time.Hour) }
	poll(
		avroEvent{schema: 1, seq: 0, at: day(0, 1), model: ptr("m1")},
		avroEvent{schema: 1, seq: 1, at: day(0, 2)},
	)
	poll(
		avroEvent{schema: 2, seq: 2, at: day(0, 3), model: ptr("m2"), cents: 150, seen: day(0, 3), tags: []string{"a", "b"}, geo: &[3]float64{48.5, 2.25, 0}},
		avroEvent{schema: 2, seq: 3, at: day(1, 1), cents: -2999, seen: day(1, 1).Add(time.Microsecond), tags: []string{}},
	)
	poll(
		avroEvent{schema: 2, seq: 4, at: day(1, 2), model: ptr("m1"), cents: 1, seen: day(1, 2), tags: []string{"c"}, geo: &[3]float64{40, -3.5, 0}},
		avroEvent{schema: 3, seq: 5, at: day(1, 3), model: ptr("m3"), os: ptr("linux"), cents: 99999999, seen: day(1, 3), geo: &[3]float64{48.5, 2.25, 35}, note: ptr("n5")},
		avroEvent{schema: 3, seq: 6, at: day(2, 0), os: ptr("ios"), seen: day(2, 0), geo: &[3]float64{1, 2, 0}, noAlt: true},
	)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("changes: %v", changes)
	if n := len(c.Snapshots(t, name)); n != 3 {
		t.Errorf("%d snapshots, want 3 (one commit per poll)", n)
	}

	type query struct {
		what, spark string
		py          Expr
		keep        func(Row) bool
	}
	field := func(r Row, col, f string) any {
		if m, ok := r[col].(map[string]any); ok {
			return m[f]
		}
		return "null"
	}
	queries := []query{
		{"all rows", "", nil, func(Row) bool { return true }},
		{"device.os = linux", "device.os = 'linux'", Cmp("device.os", "eq", "s:linux"), func(r Row) bool { return field(r, "device", "os") == "s:linux" }},
		{"amount < 0", "amount < CAST('0' AS DECIMAL(10,2))", Cmp("amount", "lt", "d:0.00"), func(r Row) bool { return r["amount"] == "d:-29.99" }},
		{"geo.alt IS NULL", "geo.alt IS NULL", IsNull("geo.alt"), func(r Row) bool { return field(r, "geo", "alt") == "null" }},
		{"day 1 (partition)", "event_time >= TIMESTAMP_NTZ '2026-07-15 00:00:00' AND event_time < TIMESTAMP_NTZ '2026-07-16 00:00:00'",
			And(Cmp("event_time", "ge", fmt.Sprintf("ts:%d", day(1, 0).UnixMicro())), Cmp("event_time", "lt", fmt.Sprintf("ts:%d", day(2, 0).UnixMicro()))),
			func(r Row) bool { at := tsOf(r["event_time"]); return !at.Before(day(1, 0)) && at.Before(day(2, 0)) }},
	}
	var reqs []Request
	for _, q := range queries {
		where := ""
		if q.spark != "" {
			where = " WHERE " + q.spark
		}
		reqs = append(reqs, SparkSQL("SELECT * FROM "+c.Spark(name)+where), PyIcebergScan(c.Name, c.Py(name), Scan{Where: q.py}))
	}
	res := e.Batch(t, reqs)
	stats.add(1, len(reqs))
	for i, q := range queries {
		var w []Row
		for _, r := range want {
			if q.keep(r) {
				w = append(w, r)
			}
		}
		if len(w) == 0 || (q.spark != "" && len(w) == len(want)) {
			t.Errorf("%s: the query selects %d of %d rows: not a test of the filter", q.what, len(w), len(want))
		}
		SameRows(t, "spark: "+q.what, w, res[2*i].Named())
		SameRows(t, "pyiceberg: "+q.what, w, res[2*i+1].Named())
	}
}
