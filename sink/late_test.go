package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// Rows whose day closed (the watermark, max event time minus the allowed
// lateness, passed its end) go to the side table with their reason and
// position; a replay after a crash routes every row as the first
// delivery did, and neither table gets a row twice.
func TestLateRowsGoToSideTable(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithEventTime("event_time", time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	at := func(d time.Duration) time.Time { return day0.Add(d) }
	stream := []msg{
		{"a", 0, at(10 * time.Hour)},                // day 0
		{"b", 1, at(25 * time.Hour)},                // day 1, max 01:00 day 1: watermark 00:00 day 1, day 0 closed
		{"late", 2, at(23 * time.Hour)},             // day 0: late
		{"c", 3, at(24*time.Hour + 30*time.Minute)}, // day 1, open
		{"late2", 4, at(time.Hour)},                 // day 0: late
	}
	offs := []int64{0, 1, 2, 3, 4}

	s := open()
	rec := batch(stream)
	defer rec.Release()
	if err := s.Write(ctx, sp0, offs, rec); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Late != 2 {
		t.Errorf("late = %d, want 2", st.Late)
	}
	// Crash before the commit, then a replay on a new sink; commit there,
	// then a redelivery of everything again.
	_ = s.Abort(ctx)
	for range 2 {
		s = open()
		if _, err := s.Start(ctx, sp0); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, sp0, offs, rec); err != nil {
			t.Fatal(err)
		}
		mustCommit(t, s)
	}
	if got, w := ids(t, cat, ident), []string{"a", "b", "c"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	side := table.StreamLateTable(ident)
	if got, w := ids(t, cat, side), []string{"late", "late2"}; !slices.Equal(got, w) {
		t.Errorf("side table ids = %v, want %v", got, w)
	}
	tbl, err := cat.LoadTable(ctx, side)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", sink.LateReason, sink.LateOffset, sink.LateSource)).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(r.NumRows()); i++ {
			id := r.Column(r.Schema().FieldIndices("id")[0]).(*array.String).Value(i)
			off := r.Column(r.Schema().FieldIndices(sink.LateOffset)[0]).(*array.Int64).Value(i)
			reason := r.Column(r.Schema().FieldIndices(sink.LateReason)[0]).(*array.String).Value(i)
			src := r.Column(r.Schema().FieldIndices(sink.LateSource)[0]).(*array.String).Value(i)
			if (id == "late" && off != 2) || (id == "late2" && off != 4) || src != sp0.Source || reason == "" {
				t.Errorf("side row %s: offset %d, source %q, reason %q", id, off, src, reason)
			}
			t.Logf("%s at %d: %s", id, off, reason)
		}
		r.Release()
	}
}

func TestLateRowsDroppedByPolicy(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", 0), sink.WithLateRows(table.DropLate))
	rec := batch([]msg{{"a", 0, day0.Add(48 * time.Hour)}, {"old", 1, day0}})
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if st := s.Stats(); st.Late != 1 || st.LateDropped != 1 {
		t.Errorf("stats = %+v, want 1 late, 1 dropped", st)
	}
	if got := ids(t, cat, ident); !slices.Equal(got, []string{"a"}) {
		t.Errorf("table ids = %v, want [a]", got)
	}
	if _, err := cat.LoadTable(ctx, table.StreamLateTable(ident)); err == nil {
		t.Error("DropLate created the side table")
	}
}
