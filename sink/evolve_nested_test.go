package sink_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// nestedTable creates db.<name>: the events columns and three nested ones,
// info struct<a string>, items list<struct<x long>> and attrs map<string,
// struct<v long>>.
func nestedTable(t testing.TB, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "info", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "a", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 6, Name: "items", Type: &iceberg.ListType{ElementID: 7, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 8, Name: "x", Type: iceberg.PrimitiveTypes.Int64},
		}}}},
		iceberg.NestedField{ID: 9, Name: "attrs", Type: &iceberg.MapType{KeyID: 10, KeyType: iceberg.PrimitiveTypes.String, ValueID: 11, ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 12, Name: "v", Type: iceberg.PrimitiveTypes.Int64},
		}}}},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	return catalogtest.CreateTable(t, cat, name, sch, spec, nil)
}

func structOf(fields ...iceberg.NestedField) *iceberg.StructType {
	return &iceberg.StructType{FieldList: fields}
}

// nestedFields are the new fields of TestAddNestedFields: info.b,
// info.c (a struct), items.element.y and attrs.value.w.
var nestedFields = []sink.Column{
	{Name: "info", Type: structOf(
		iceberg.NestedField{Name: "a", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{Name: "b", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{Name: "c", Type: structOf(iceberg.NestedField{Name: "d", Type: iceberg.PrimitiveTypes.String})},
	)},
	{Name: "items", Type: &iceberg.ListType{Element: structOf(iceberg.NestedField{Name: "y", Type: iceberg.PrimitiveTypes.String})}},
	{Name: "attrs", Type: &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.String, ValueType: structOf(iceberg.NestedField{Name: "w", Type: iceberg.PrimitiveTypes.Bool})}},
}

// nestedBatch is one row per offset in [from, to) with the nested
// columns as JSON (the input schema of the table's current columns).
func nestedBatch(t *testing.T, sc *arrow.Schema, from, to int64, value func(o int64) string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for o := from; o < to; o++ {
		if err := b.UnmarshalJSON([]byte(value(o))); err != nil {
			t.Fatalf("row %d: %v", o, err)
		}
	}
	return b.NewRecordBatch()
}

// tableRows reads every row of the table as JSON, by id.
func tableRows(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]string {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		st := array.RecordToStructArray(rec)
		for i := range st.Len() {
			b, err := json.Marshal(st.GetOneForMarshal(i))
			if err != nil {
				t.Fatal(err)
			}
			var row map[string]any
			if err := json.Unmarshal(b, &row); err != nil {
				t.Fatal(err)
			}
			out[row["id"].(string)] = string(b)
		}
		st.Release()
		rec.Release()
	}
	return out
}

// A struct column (also inside a list or a map) gains the fields a
// column's type has and it lacks, optional, in the schema change's own
// commit after the pending rows; rows committed before read null in them.
func TestAddNestedFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := nestedTable(t, cat, "nested")
	s := mustOpen(t, cat, ident)
	tbl, _ := cat.LoadTable(ctx, ident)
	old, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	row := func(o int64, nested string) string {
		return fmt.Sprintf(`{"id":"p0-%d","seq":%d,"event_time":%d,%s}`, o, o, day0.UnixMicro()+o, nested)
	}
	before := nestedBatch(t, old, 0, 2, func(o int64) string {
		return row(o, `"info":{"a":"x"},"items":[{"x":1}],"attrs":[{"key":"k","value":{"v":2}}]`)
	})
	defer before.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1}, before); err != nil {
		t.Fatal(err)
	}
	if err := s.AddColumns(ctx, nestedFields...); err != nil {
		t.Fatal(err)
	}
	if s.Pending() != 0 || catalogtest.Snapshots(t, cat, ident) != 1 {
		t.Fatalf("pending %d, snapshots %d: the pending rows are committed before the schema change", s.Pending(), catalogtest.Snapshots(t, cat, ident))
	}
	tbl, _ = cat.LoadTable(ctx, ident)
	for _, name := range []string{"info.b", "info.c", "info.c.d", "items.element.y", "attrs.value.w"} {
		f, ok := tbl.Schema().FindFieldByName(name)
		if !ok || f.Required {
			t.Errorf("%s: %+v (found %v), want an optional field", name, f, ok)
		}
	}
	if n := len(tbl.Schema().Fields()); n != 6 {
		t.Errorf("%d columns, want the 6 the table had", n)
	}
	if _, ok := tbl.Properties()[fmt.Sprintf("icerun.schema-change.%d", tbl.Schema().ID)]; !ok {
		t.Errorf("no schema-change property: %v", tbl.Properties())
	}
	// Again: nothing left to add, the table does not move.
	if err := s.AddColumns(ctx, nestedFields...); err != nil {
		t.Fatal(err)
	}
	if again, _ := cat.LoadTable(ctx, ident); again.MetadataLocation() != tbl.MetadataLocation() {
		t.Errorf("adding fields the table has moved it")
	}

	cur, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	after := nestedBatch(t, cur, 2, 3, func(o int64) string {
		return row(o, `"info":{"a":"x","b":3,"c":{"d":"deep"}},"items":[{"x":1,"y":"why"}],"attrs":[{"key":"k","value":{"v":2,"w":true}}]`)
	})
	defer after.Release()
	if err := s.Write(ctx, sp0, []int64{2}, after); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	got := tableRows(t, cat, ident)
	for id, wantNested := range map[string]string{
		"p0-0": `{"a":"x","b":null,"c":null}|[{"x":1,"y":null}]|[{"key":"k","value":{"v":2,"w":null}}]`,
		"p0-1": `{"a":"x","b":null,"c":null}|[{"x":1,"y":null}]|[{"key":"k","value":{"v":2,"w":null}}]`,
		"p0-2": `{"a":"x","b":3,"c":{"d":"deep"}}|[{"x":1,"y":"why"}]|[{"key":"k","value":{"v":2,"w":true}}]`,
	} {
		var r map[string]json.RawMessage
		if err := json.Unmarshal([]byte(got[id]), &r); err != nil {
			t.Fatalf("%s: %q: %v", id, got[id], err)
		}
		if n := fmt.Sprintf("%s|%s|%s", r["info"], r["items"], r["attrs"]); n != wantNested {
			t.Errorf("%s: %s, want %s", id, n, wantNested)
		}
	}
}

// Sinks racing to add the same nested field all succeed, through
// catalogs of their own; the struct gets it once. A nested field whose
// type does not fit the table's fails with ErrColumnConflict, and the
// table is left as it was (the columns of the same call not added).
func TestAddNestedFieldsRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := nestedTable(t, cat, "nested")
	const n = 4
	sinks := make([]*sink.Sink, n)
	for i := range sinks {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
		if err != nil {
			t.Fatal(err)
		}
		sinks[i] = s
	}
	infoB := sink.Column{Name: "info", Type: structOf(iceberg.NestedField{Name: "b", Type: iceberg.PrimitiveTypes.Int64})}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range sinks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sinks[i].AddColumns(ctx, infoB, nestedFields[1])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("sink %d: %v", i, err)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := tbl.Schema().FindFieldByName("info")
	if got := info.Type.String(); got != "struct<5: a: optional string, 13: b: optional long>" {
		t.Errorf("info is %s", got)
	}
	if _, ok := tbl.Schema().FindFieldByName("items.element.y"); !ok {
		t.Errorf("no items.element.y: %s", tbl.Schema())
	}
	// A fitting type is taken as is; one that does not fit is refused,
	// the table left as it was.
	if err := sinks[1].AddColumns(ctx, sink.Column{Name: "info", Type: structOf(iceberg.NestedField{Name: "b", Type: iceberg.PrimitiveTypes.Int32})}); err != nil {
		t.Errorf("int into the long field: %v", err)
	}
	before, _ := cat.LoadTable(ctx, ident)
	for _, bad := range []sink.Column{
		{Name: "info", Type: structOf(iceberg.NestedField{Name: "a", Type: iceberg.PrimitiveTypes.Int64})},
		{Name: "info", Type: structOf(iceberg.NestedField{Name: "b", Type: iceberg.PrimitiveTypes.String})},
		{Name: "items", Type: &iceberg.ListType{Element: structOf(iceberg.NestedField{Name: "x", Type: structOf(iceberg.NestedField{Name: "z", Type: iceberg.PrimitiveTypes.Int64})})}},
		{Name: "attrs", Type: &iceberg.MapType{KeyType: iceberg.PrimitiveTypes.Int64, ValueType: structOf(iceberg.NestedField{Name: "w", Type: iceberg.PrimitiveTypes.Bool})}},
		{Name: "info", Type: iceberg.PrimitiveTypes.String},
	} {
		err := sinks[2].AddColumns(ctx, sink.Column{Name: "other", Type: iceberg.PrimitiveTypes.Bool}, bad)
		if !errors.Is(err, sink.ErrColumnConflict) {
			t.Errorf("%s %s: %v, want ErrColumnConflict", bad.Name, bad.Type, err)
		}
	}
	after, _ := cat.LoadTable(ctx, ident)
	if after.MetadataLocation() != before.MetadataLocation() {
		t.Errorf("a refused change moved the table")
	}
}

// Late rows written after fields were added inside struct columns go to
// the side table made before, which keeps its own columns: the new
// fields' values are not in the late rows, and nothing fails.
func TestLateRowsAfterNestedFieldsAdded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := nestedTable(t, cat, "nested")
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", time.Hour))
	arrowOf := func() *arrow.Schema {
		sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, false, false)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	row := func(o int64, at time.Duration, nested string) string {
		return fmt.Sprintf(`{"id":"p0-%d","seq":%d,"event_time":%d,%s}`, o, o, day0.Add(at).UnixMicro(), nested)
	}
	old := `"info":{"a":"x"},"items":[{"x":1}],"attrs":[{"key":"k","value":{"v":2}}]`
	first := nestedBatch(t, arrowOf(), 0, 3, func(o int64) string {
		return row(o, []time.Duration{10 * time.Hour, 26 * time.Hour, 11 * time.Hour}[o], old) // the third is late
	})
	defer first.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1, 2}, first); err != nil {
		t.Fatal(err)
	}
	if err := s.AddColumns(ctx, nestedFields...); err != nil {
		t.Fatal(err)
	}
	second := nestedBatch(t, arrowOf(), 3, 5, func(o int64) string {
		return row(o, []time.Duration{27 * time.Hour, 12 * time.Hour}[o-3], // the second is late
			`"info":{"a":"y","b":3,"c":{"d":"deep"}},"items":[{"x":1,"y":"why"}],"attrs":[{"key":"k","value":{"v":2,"w":true}}]`)
	})
	defer second.Release()
	if err := s.Write(ctx, sp0, []int64{3, 4}, second); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if st := s.Stats(); st.Late != 2 {
		t.Errorf("late = %d, want 2", st.Late)
	}
	side := tableRows(t, cat, icetable.Identifier{"db", "nested_sink_late"})
	for id, want := range map[string]string{"p0-2": `"a":"x"`, "p0-4": `"a":"y"`} {
		if !strings.Contains(side[id], want) {
			t.Errorf("side table row %s: %s, want info with %s", id, side[id], want)
		}
	}
	if got := tableRows(t, cat, ident); len(got) != 3 {
		t.Errorf("table holds %d rows, want 3", len(got))
	}
}
