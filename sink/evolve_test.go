package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

var noteColumn = sink.Column{Name: "note", Type: iceberg.PrimitiveTypes.String}

// notedBatch is msgs with a note column ("note-<id>").
func notedBatch(msgs []msg) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, m := range msgs {
		b.Field(0).(*array.StringBuilder).Append(m.id)
		b.Field(1).(*array.Int64Builder).Append(m.seq)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(m.at.UnixMicro()))
		b.Field(3).(*array.StringBuilder).Append("note-" + m.id)
	}
	return b.NewRecordBatch()
}

// notes reads id -> note of every row ("<null>" for a null note).
func notes(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]string {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "note")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		id, note := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := 0; i < id.Len(); i++ {
			out[id.Value(i)] = "<null>"
			if note.IsValid(i) {
				out[id.Value(i)] = note.Value(i)
			}
		}
		rec.Release()
	}
	return out
}

// AddColumns commits the pending rows, then the schema change in a
// commit of its own; the rows written after it fill the column, the rows
// committed before read null.
func TestAddColumnsThenRowsThatNeedIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 5)
	if err := s.AddColumns(ctx, noteColumn); err != nil {
		t.Fatal(err)
	}
	if s.Pending() != 0 || catalogtest.Snapshots(t, cat, ident) != 1 {
		t.Fatalf("pending %d, snapshots %d: the pending rows are committed before the schema change", s.Pending(), catalogtest.Snapshots(t, cat, ident))
	}
	ms, offs := messages(0, 5, 10)
	rec := notedBatch(ms)
	defer rec.Release()
	if err := s.Write(ctx, sp0, offs, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	got := notes(t, cat, ident)
	for o := range 10 {
		id, want := fmt.Sprintf("p0-%d", o), "<null>"
		if o >= 5 {
			want = "note-" + id
		}
		if got[id] != want {
			t.Errorf("%s: note %q, want %q", id, got[id], want)
		}
	}
	tbl, _ := cat.LoadTable(ctx, ident)
	if _, ok := tbl.Properties()[fmt.Sprintf("icerun.schema-change.%d", tbl.Schema().ID)]; !ok {
		t.Errorf("no schema-change property: %v", tbl.Properties())
	}
}

// Sinks racing to add the same column all succeed, through catalogs of
// their own; the table gets it once. A sink whose pending rows were
// written for the old schema fails its commit with ErrSchemaChanged and
// commits nothing; after Start it writes for the new schema.
func TestAddColumnsRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	const n = 4
	sinks := make([]*sink.Sink, n)
	for i := range sinks {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
		if err != nil {
			t.Fatal(err)
		}
		sinks[i] = s
	}
	pending := sinks[0]
	sp1 := sink.SourcePartition{Source: "test:events", Partition: 1}
	mustWrite(t, pending, sp1, 0, 3)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sinks[i].AddColumns(ctx, noteColumn, sink.Column{Name: "n", Type: iceberg.PrimitiveTypes.Int64})
		}()
	}
	wg.Wait()
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("sink %d: %v", i+1, err)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"id", "seq", "event_time", "note", "n"}) {
		t.Errorf("columns %v", names)
	}
	if _, err := pending.Commit(ctx); !errors.Is(err, sink.ErrSchemaChanged) {
		t.Fatalf("commit of rows written for the old schema: %v, want ErrSchemaChanged", err)
	}
	if got := ids(t, cat, ident); len(got) != 0 {
		t.Fatalf("table holds %v", got)
	}
	if _, err := pending.Start(ctx, sp1); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, pending, sp1, 0, 3)
	mustCommit(t, pending)
	if got, w := ids(t, cat, ident), want(1, 0, 3); !slices.Equal(got, w) {
		t.Errorf("ids %v, want %v", got, w)
	}
	// A compatible type is accepted, an incompatible one refused with the
	// table left as it was.
	if err := sinks[1].AddColumns(ctx, sink.Column{Name: "n", Type: iceberg.PrimitiveTypes.Int32}); err != nil {
		t.Errorf("int into the long column: %v", err)
	}
	before, _ := cat.LoadTable(ctx, ident)
	err = sinks[2].AddColumns(ctx, sink.Column{Name: "other", Type: iceberg.PrimitiveTypes.Bool}, sink.Column{Name: "note", Type: iceberg.PrimitiveTypes.Int64})
	if !errors.Is(err, sink.ErrColumnConflict) {
		t.Errorf("long into the string column: %v, want ErrColumnConflict", err)
	}
	after, _ := cat.LoadTable(ctx, ident)
	if after.MetadataLocation() != before.MetadataLocation() {
		t.Errorf("a refused change moved the table")
	}
}

// A long column handed for an existing double column is refused by
// AddColumns with the error schema.Resolve (the batch path) gives the long
// values themselves: the promotion rule is schema.Promotable's, and long
// to double is not one of its promotions. The table is left as it was.
func TestAddColumnsRefusesLongForDouble(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	if err := s.AddColumns(ctx, sink.Column{Name: "score", Type: iceberg.PrimitiveTypes.Float64}); err != nil {
		t.Fatal(err)
	}
	before, _ := cat.LoadTable(ctx, ident)
	err := s.AddColumns(ctx, sink.Column{Name: "score", Type: iceberg.PrimitiveTypes.Int64})
	if !errors.Is(err, sink.ErrColumnConflict) || !errors.Is(err, schema.ErrIncompatibleType) {
		t.Errorf("AddColumns(score long) on a double column = %v, want ErrColumnConflict and schema.ErrIncompatibleType", err)
	}
	after, _ := cat.LoadTable(ctx, ident)
	if after.MetadataLocation() != before.MetadataLocation() {
		t.Errorf("a refused change moved the table")
	}
	// The same values through the write path: the same typed error.
	ms, offs := messages(0, 0, 3)
	rec := scoredBatch(ms)
	defer rec.Release()
	if err := s.Write(ctx, sp0, offs, rec); !errors.Is(err, schema.ErrIncompatibleType) {
		t.Errorf("Write of long scores into the double column = %v, want schema.ErrIncompatibleType", err)
	}
	// The promotions the batch path applies are accepted.
	if err := s.AddColumns(ctx, sink.Column{Name: "score", Type: iceberg.PrimitiveTypes.Float32}); err != nil {
		t.Errorf("AddColumns(score float) on a double column: %v", err)
	}
}

// scoredBatch is msgs with a long score column (the offset).
func scoredBatch(msgs []msg) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "score", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, m := range msgs {
		b.Field(0).(*array.StringBuilder).Append(m.id)
		b.Field(1).(*array.Int64Builder).Append(m.seq)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(m.at.UnixMicro()))
		b.Field(3).(*array.Int64Builder).Append(m.seq)
	}
	return b.NewRecordBatch()
}

// The sink adds columns through the table's AddColumns: for the same
// column of the table and the same new type, both accept or both refuse,
// by schema.Fits (the rule of the rows' resolution).
func TestAddColumnsTypesAgreeWithTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := iceberg.PrimitiveTypes
	list := func(e iceberg.Type) iceberg.Type { return &iceberg.ListType{Element: e} }
	cases := []struct {
		col, add iceberg.Type
		fits     bool
	}{
		{p.Float64, p.Int64, false}, // long into double: a long above 2^53 does not survive
		{p.Int64, p.Int32, true},    // int into long
		{p.Float64, p.Float32, true},
		{p.Int32, p.Int64, false},
		{iceberg.DecimalTypeOf(12, 2), iceberg.DecimalTypeOf(10, 2), true},
		{list(p.Float64), list(p.Int64), false},
		{list(p.Int64), list(p.Int32), true},
	}
	for i, tc := range cases {
		cat, _ := catalogtest.New(t)
		ident := eventsTable(t, cat, fmt.Sprintf("agree%d", i))
		w, err := table.Open(ctx, cat, ident)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddColumns(ctx, table.NewColumn{Name: "c", Type: tc.col}); err != nil {
			t.Fatal(err)
		}
		s := mustOpen(t, cat, ident)
		add := sink.Column{Name: "c", Type: tc.add}
		_, tableErr := w.AddColumns(ctx, add)
		sinkErr := s.AddColumns(ctx, add)
		for who, err := range map[string]error{"table": tableErr, "sink": sinkErr} {
			if tc.fits && err != nil {
				t.Errorf("%s: AddColumns(c %s) on a %s column = %v, want nil", who, tc.add, tc.col, err)
			}
			if !tc.fits && (!errors.Is(err, table.ErrSchemaChange) || !errors.Is(err, schema.ErrIncompatibleType)) {
				t.Errorf("%s: AddColumns(c %s) on a %s column = %v, want ErrSchemaChange and schema.ErrIncompatibleType", who, tc.add, tc.col, err)
			}
		}
		if got := schema.Fits(tc.add, tc.col); got != tc.fits {
			t.Errorf("schema.Fits(%s, %s) = %v, want %v", tc.add, tc.col, got, tc.fits)
		}
	}
}

// A rerun of the sink's AddColumns commits nothing.
func TestAddColumnsRerunIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	if err := s.AddColumns(ctx, noteColumn); err != nil {
		t.Fatal(err)
	}
	before, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddColumns(ctx, noteColumn, sink.Column{Name: "seq", Type: iceberg.PrimitiveTypes.Int32}); err != nil {
		t.Fatal(err)
	}
	after, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if before.MetadataLocation() != after.MetadataLocation() {
		t.Errorf("the rerun committed %s after %s", after.MetadataLocation(), before.MetadataLocation())
	}
}
