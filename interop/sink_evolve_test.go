//go:build interop

package interop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/sink"
)

// evolvedMsg is one message of the evolving stream: its offset and its
// values; a nil pointer (a nil slice) is a null.
type evolvedMsg struct {
	off    int64
	at     time.Time
	model  *string
	os     *string    // device.os, from phase 3
	cents  *int64     // amount, decimal(10,2), from phase 2
	seen   *time.Time // seen_at, timestamptz, from phase 2
	tags   []string   // from phase 2
	geo    *[2]float64
	alt    *float64 // geo.alt, from phase 3
	note   *string  // from phase 3
	noDev  bool     // device null
	noTags bool     // tags null (else the list, maybe empty)
	lines  []line   // from phase 2; nil for null
}

// line is an element of the list of structs lines: qty is added to its
// struct in phase 3.
type line struct {
	sku string
	qty *int64
}

func ptr[T any](v T) *T { return &v }

// evolvedPhase is the input schema of phase 1, 2 or 3: each adds columns,
// phase 3 also fields inside the struct columns device and geo.
func evolvedPhase(phase int) []arrow.Field {
	device := []arrow.Field{{Name: "model", Type: arrow.BinaryTypes.String, Nullable: true}}
	lines := []arrow.Field{{Name: "sku", Type: arrow.BinaryTypes.String, Nullable: true}}
	geo := []arrow.Field{
		{Name: "lat", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "lon", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	if phase >= 3 {
		device = append(device, arrow.Field{Name: "os", Type: arrow.BinaryTypes.String, Nullable: true})
		geo = append(geo, arrow.Field{Name: "alt", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
		lines = append(lines, arrow.Field{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	}
	fields := []arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "device", Type: arrow.StructOf(device...), Nullable: true},
	}
	if phase >= 2 {
		fields = append(fields,
			arrow.Field{Name: "amount", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
			arrow.Field{Name: "seen_at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
			arrow.Field{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
			arrow.Field{Name: "geo", Type: arrow.StructOf(geo...), Nullable: true},
			arrow.Field{Name: "lines", Type: arrow.ListOf(arrow.StructOf(lines...)), Nullable: true},
		)
	}
	if phase >= 3 {
		fields = append(fields, arrow.Field{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true})
	}
	return fields
}

// evolvedBatch is msgs as a record of phase's schema.
func evolvedBatch(phase int, msgs []evolvedMsg) arrow.RecordBatch {
	str := func(b array.Builder, s *string) {
		if s == nil {
			b.AppendNull()
			return
		}
		b.(*array.StringBuilder).Append(*s)
	}
	f64 := func(b array.Builder, f *float64) {
		if f == nil {
			b.AppendNull()
			return
		}
		b.(*array.Float64Builder).Append(*f)
	}
	return batch(evolvedPhase(phase), len(msgs), func(b *array.RecordBuilder, i int) {
		m := msgs[i]
		b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("e-%d", m.off))
		b.Field(1).(*array.Int64Builder).Append(m.off)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(m.at.UnixMicro()))
		dev := b.Field(3).(*array.StructBuilder)
		if m.noDev {
			dev.AppendNull()
		} else {
			dev.Append(true)
			str(dev.FieldBuilder(0), m.model)
			if phase >= 3 {
				str(dev.FieldBuilder(1), m.os)
			}
		}
		if phase < 2 {
			return
		}
		if m.cents == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(*m.cents))
		}
		if m.seen == nil {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(m.seen.UnixMicro()))
		}
		tags := b.Field(6).(*array.ListBuilder)
		if m.noTags {
			tags.AppendNull()
		} else {
			tags.Append(true)
			for _, s := range m.tags {
				tags.ValueBuilder().(*array.StringBuilder).Append(s)
			}
		}
		geo := b.Field(7).(*array.StructBuilder)
		if m.geo == nil {
			geo.AppendNull()
		} else {
			geo.Append(true)
			geo.FieldBuilder(0).(*array.Float64Builder).Append(m.geo[0])
			geo.FieldBuilder(1).(*array.Float64Builder).Append(m.geo[1])
			if phase >= 3 {
				f64(geo.FieldBuilder(2), m.alt)
			}
		}
		lb := b.Field(8).(*array.ListBuilder)
		if m.lines == nil {
			lb.AppendNull()
		} else {
			lb.Append(true)
			eb := lb.ValueBuilder().(*array.StructBuilder)
			for _, l := range m.lines {
				eb.Append(true)
				eb.FieldBuilder(0).(*array.StringBuilder).Append(l.sku)
				if phase >= 3 {
					if l.qty == nil {
						eb.FieldBuilder(1).AppendNull()
					} else {
						eb.FieldBuilder(1).(*array.Int64Builder).Append(*l.qty)
					}
				}
			}
		}
		if phase >= 3 {
			str(b.Field(9), m.note)
		}
	})
}

// evolvedRows are the rows msgs (written in phase) land as in the table
// of the final schema: null in the columns and struct fields added after.
func evolvedRows(phase int, msgs []evolvedMsg) []Row {
	rec := evolvedBatch(phase, msgs)
	defer rec.Release()
	rows := RowsOf(rec)
	for _, r := range rows {
		for _, c := range []string{"amount", "seen_at", "tags", "geo", "lines", "note"} {
			if _, ok := r[c]; !ok {
				r[c] = "null"
			}
		}
		if dev, ok := r["device"].(map[string]any); ok {
			if _, ok := dev["os"]; !ok {
				dev["os"] = "null"
			}
		}
		if geo, ok := r["geo"].(map[string]any); ok {
			if _, ok := geo["alt"]; !ok {
				geo["alt"] = "null"
			}
		}
		if lines, ok := r["lines"].([]any); ok {
			for _, l := range lines {
				if l, ok := l.(map[string]any); ok {
					if _, ok := l["qty"]; !ok {
						l["qty"] = "null"
					}
				}
			}
		}
	}
	return rows
}

// TestSinkEvolvedTable streams rows into a day-partitioned table through
// package sink while the table evolves under it: AddColumns adds a
// decimal, a timestamptz, a list, a struct and a list of structs after
// the first commit, then a string column and a field inside each of the
// three struct columns (one the table had from the start, two added by
// the first change). Spark and PyIceberg read exactly the rows the sink
// was given, null in what was added after a row's commit, in full scans
// and with filters on the new columns, a new nested field and the
// partition column.
func TestSinkEvolvedTable(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { runSinkEvolved(t, e, c, v) })
		}
	})
}

func runSinkEvolved(t *testing.T, e *Engines, c *Catalog, v int) {
	ctx := context.Background()
	name := fmt.Sprintf("sink_evolved_v%d", v)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "device", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "model", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	c.CreateTable(t, name, sch, spec, iceberg.Properties{"format-version": fmt.Sprint(v)})
	s, err := sink.Open(ctx, c.Cat, c.Ident(name), sink.WithCommitRows(1_000_000), sink.WithCommitInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	from := sink.SourcePartition{Source: "stream:evolving", Partition: 0}
	write := func(phase int, msgs []evolvedMsg) {
		t.Helper()
		offs := make([]int64, len(msgs))
		for i, m := range msgs {
			offs[i] = m.off
		}
		rec := evolvedBatch(phase, msgs)
		defer rec.Release()
		if err := s.Write(ctx, from, offs, rec); err != nil {
			t.Fatalf("phase %d: %v", phase, err)
		}
	}
	commit := func(step string) {
		t.Helper()
		if _, err := s.Commit(ctx); err != nil {
			t.Fatalf("%s: commit: %v", step, err)
		}
	}
	day := func(d int, h int) time.Time { return sinkDay0.Add(time.Duration(24*d+h) * time.Hour) }
	var want []Row

	// Phase 1: the table as created, day 0.
	p1 := []evolvedMsg{
		{off: 0, at: day(0, 8), model: ptr("m1")},
		{off: 1, at: day(0, 9), model: ptr("m2")},
		{off: 2, at: day(0, 10), noDev: true},
		{off: 3, at: day(0, 11)},
	}
	write(1, p1)
	// Phase 2: five columns added (the pending rows are committed first),
	// rows on days 0 and 1.
	if err := s.AddColumns(ctx,
		sink.Column{Name: "amount", Type: iceberg.DecimalTypeOf(10, 2)},
		sink.Column{Name: "seen_at", Type: iceberg.PrimitiveTypes.TimestampTz},
		sink.Column{Name: "tags", Type: &iceberg.ListType{Element: iceberg.PrimitiveTypes.String}},
		sink.Column{Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
			{Name: "lon", Type: iceberg.PrimitiveTypes.Float64},
		}}},
		sink.Column{Name: "lines", Type: &iceberg.ListType{Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{Name: "sku", Type: iceberg.PrimitiveTypes.String},
		}}}},
	); err != nil {
		t.Fatalf("first change: %v", err)
	}
	want = append(want, evolvedRows(1, p1)...)
	p2 := []evolvedMsg{
		{off: 4, at: day(0, 12), model: ptr("m1"), cents: ptr[int64](150), seen: ptr(day(0, 12)), tags: []string{"a", "b"}, geo: &[2]float64{48.5, 2.25}, lines: []line{{sku: "k1"}, {sku: "k2"}}},
		{off: 5, at: day(0, 13), model: ptr("m3"), cents: ptr[int64](-2999), tags: []string{}, geo: &[2]float64{40, -3.5}, lines: []line{}},
		{off: 6, at: day(1, 1), noDev: true, seen: ptr(day(1, 1)), noTags: true},
		{off: 7, at: day(1, 2), model: ptr("m2"), cents: ptr[int64](99999999), seen: ptr(day(1, 2).Add(time.Microsecond)), tags: []string{"c"}, geo: &[2]float64{-33.9, 151.2}},
	}
	write(2, p2)
	commit("phase 2")
	want = append(want, evolvedRows(2, p2)...)
	// Phase 3: a top-level column and a field in each struct column.
	if err := s.AddColumns(ctx,
		sink.Column{Name: "note", Type: iceberg.PrimitiveTypes.String},
		sink.Column{Name: "device", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{{Name: "os", Type: iceberg.PrimitiveTypes.String}}}},
		sink.Column{Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{{Name: "alt", Type: iceberg.PrimitiveTypes.Float64}}}},
		sink.Column{Name: "lines", Type: &iceberg.ListType{Element: &iceberg.StructType{FieldList: []iceberg.NestedField{{Name: "qty", Type: iceberg.PrimitiveTypes.Int64}}}}},
	); err != nil {
		t.Fatalf("second change: %v", err)
	}
	p3 := []evolvedMsg{
		{off: 8, at: day(1, 5), model: ptr("m1"), os: ptr("linux"), cents: ptr[int64](200), tags: []string{"a"}, geo: &[2]float64{48.5, 2.25}, alt: ptr(35.0), note: ptr("n8"), lines: []line{{sku: "k1", qty: ptr[int64](3)}, {sku: "k3"}}},
		{off: 9, at: day(2, 0), model: ptr("m4"), os: ptr("ios"), seen: ptr(day(2, 0)), noTags: true, note: ptr("n9")},
		{off: 10, at: day(2, 3), os: ptr("linux"), cents: ptr[int64](1), geo: &[2]float64{1, 2}, lines: []line{{sku: "k2", qty: ptr[int64](-1)}}},
		{off: 11, at: day(2, 4), noDev: true, noTags: true},
	}
	write(3, p3)
	commit("phase 3")
	want = append(want, evolvedRows(3, p3)...)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(c.Snapshots(t, name)); got != 3 {
		t.Errorf("%d snapshots, want 3 (one commit per phase)", got)
	}
	tbl := c.Load(t, name)
	t.Logf("schema %d: %s", tbl.Schema().ID, tbl.Schema())

	type query struct {
		what  string
		spark string // the WHERE clause
		py    Expr
		keep  func(Row) bool
	}
	ts := func(tm time.Time) string { return fmt.Sprintf("ts:%d", tm.UnixMicro()) }
	inDay := func(r Row, d int) bool {
		at := tsOf(r["event_time"])
		return !at.Before(day(d, 0)) && at.Before(day(d+1, 0))
	}
	amount := func(r Row) (string, bool) { s, _ := r["amount"].(string); return s, s != "null" }
	field := func(r Row, col, f string) string {
		m, ok := r[col].(map[string]any)
		if !ok {
			return "null"
		}
		return m[f].(string)
	}
	queries := []query{
		{"all rows", "", nil, func(Row) bool { return true }},
		{"amount > 1.99", "amount > CAST('1.99' AS DECIMAL(10,2))", Cmp("amount", "gt", "d:1.99"), func(r Row) bool {
			a, ok := amount(r)
			return ok && slices.Contains([]string{"d:999999.99", "d:2.00"}, a)
		}},
		{"amount IS NULL", "amount IS NULL", IsNull("amount"), func(r Row) bool { _, ok := amount(r); return !ok }},
		{"seen_at >= day 1", "seen_at >= TIMESTAMP '2026-07-15 00:00:00 UTC'", Cmp("seen_at", "ge", ts(day(1, 0))), func(r Row) bool {
			s, _ := r["seen_at"].(string)
			return s != "null" && !tsOf(s).Before(day(1, 0))
		}},
		{"geo.lat > 45", "geo.lat > 45.0", Cmp("geo.lat", "gt", Float(45)), func(r Row) bool { return field(r, "geo", "lat") == Float(48.5) }},
		{"device.os = linux", "device.os = 'linux'", Cmp("device.os", "eq", "s:linux"), func(r Row) bool { return field(r, "device", "os") == "s:linux" }},
		{"note IS NULL", "note IS NULL", IsNull("note"), func(r Row) bool { return r["note"] == "null" }},
		{"day 1 (partition)", "event_time >= TIMESTAMP_NTZ '2026-07-15 00:00:00' AND event_time < TIMESTAMP_NTZ '2026-07-16 00:00:00'",
			And(Cmp("event_time", "ge", ts(day(1, 0))), Cmp("event_time", "lt", ts(day(2, 0)))), func(r Row) bool { return inDay(r, 1) }},
		{"day 0 and amount IS NULL", "event_time < TIMESTAMP_NTZ '2026-07-15 00:00:00' AND amount IS NULL",
			And(Cmp("event_time", "lt", ts(day(1, 0))), IsNull("amount")), func(r Row) bool { _, ok := amount(r); return inDay(r, 0) && !ok }},
	}
	var reqs []Request
	for _, q := range queries {
		where := ""
		if q.spark != "" {
			where = " WHERE " + q.spark
		}
		reqs = append(reqs,
			SparkSQL("SELECT * FROM "+c.Spark(name)+where),
			PyIcebergScan(c.Name, c.Py(name), Scan{Where: q.py}))
	}
	res := e.Batch(t, reqs)
	stats.add(1, len(reqs))
	for i, q := range queries {
		var w []Row
		for _, r := range want {
			if q.keep(r) {
				w = append(w, maps.Clone(r))
			}
		}
		if len(w) == 0 || (q.spark != "" && len(w) == len(want)) {
			t.Errorf("%s: the query selects %d of %d rows: not a test of the filter", q.what, len(w), len(want))
		}
		SameRows(t, "spark: "+q.what, w, res[2*i].Named())
		SameRows(t, "pyiceberg: "+q.what, pyLines(w), res[2*i+1].Named())
	}
}

// pyLines is rows as PyIceberg 0.12 reads them: a null list of structs
// in a data file that has the column reads as an empty list
// (apache/iceberg-python#3833: its projection rebuilds the list without
// its validity; Spark reads the null). The rows of phase 1 (seq < 4),
// written before the column existed, read null.
func pyLines(rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = r
		if r["lines"] == "null" && r.Int("seq") >= 4 {
			out[i] = maps.Clone(r)
			out[i]["lines"] = []any{}
		}
	}
	return out
}

// tsOf is the time of a typed timestamp value ("ts:<micros>").
func tsOf(v any) time.Time {
	s, _ := v.(string)
	var n int64
	fmt.Sscanf(s, "ts:%d", &n)
	return time.UnixMicro(n).UTC()
}
