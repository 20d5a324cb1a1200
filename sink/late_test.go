package sink_test

import (
	"context"
	"errors"
	"slices"
	"strings"
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
	t.Parallel()
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
	t.Parallel()
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

// Under table.RejectLate a batch holding a late row fails its Write with
// a RowError naming the first one, wrapping table.ErrLateRows, counted,
// and nothing of the batch is kept: the rows before it written again go
// on as usual.
func TestLateRowsRejectedByPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", 0), sink.WithLateRows(table.RejectLate))
	msgs := []msg{{"a", 0, day0.Add(48 * time.Hour)}, {"b", 1, day0.Add(49 * time.Hour)}, {"old", 2, day0}, {"c", 3, day0.Add(50 * time.Hour)}}
	rec := batch(msgs)
	defer rec.Release()
	err := s.Write(ctx, sp0, []int64{0, 1, 2, 3}, rec)
	var bad *sink.RowError
	if !errors.As(err, &bad) || bad.Row != 2 || !errors.Is(err, table.ErrLateRows) || !errors.Is(err, sink.ErrBadRow) {
		t.Fatalf("Write with a late row at 2 = %v, want a RowError at row 2 matching table.ErrLateRows", err)
	}
	if st := s.Stats(); st.Late != 1 || st.LateRejected != 1 || st.LateDropped != 0 {
		t.Errorf("stats = %+v, want 1 late, 1 rejected", st)
	}
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cat, ident); len(got) != 0 {
		t.Errorf("the refused batch left rows %v", got)
	}
	head := batch(msgs[:2])
	defer head.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1}, head); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if got := ids(t, cat, ident); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("table ids = %v, want [a b]", got)
	}
	if _, err := cat.LoadTable(ctx, table.StreamLateTable(ident)); err == nil {
		t.Error("RejectLate created the side table")
	}
}

// The late policy is the table's: every policy is accepted, the zero
// value (no policy) and unknown values are refused, and a sink given no
// policy routes late rows to table.StreamLateTable.
func TestLatePolicyOption(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	for _, p := range []table.LatePolicy{table.RouteLate, table.DropLate, table.RejectLate} {
		if _, err := sink.Open(ctx, cat, ident, sink.WithLateRows(p)); err != nil {
			t.Errorf("WithLateRows(%s): %v", p, err)
		}
	}
	for _, p := range []table.LatePolicy{0, 9} {
		if _, err := sink.Open(ctx, cat, ident, sink.WithLateRows(p)); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("WithLateRows(%s) = %v, want ErrBadOption", p, err)
		}
	}
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", 0))
	rec := batch([]msg{{"a", 0, day0.Add(48 * time.Hour)}, {"old", 1, day0}})
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if got := ids(t, cat, table.StreamLateTable(ident)); !slices.Equal(got, []string{"old"}) {
		t.Errorf("side table ids = %v, want [old]", got)
	}
	if got, w := strings.Join(table.StreamLateTable(ident), "."), strings.Join(ident, ".")+"_sink_late"; got != w {
		t.Errorf("StreamLateTable(%s) = %s, want %s", ident, got, w)
	}
	if st := s.Stats(); st.Late != 1 || st.LateDropped != 0 || st.LateRejected != 0 {
		t.Errorf("stats = %+v, want 1 late, routed", st)
	}
}
