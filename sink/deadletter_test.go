package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

var deadIdent = icetable.Identifier{"db", "events_dead"}

// deadLetter is one row of a dead-letter table.
type deadLetter struct {
	table, source, reason string
	partition             int32
	offset                int64
	raw                   string
}

// deadLetters reads the dead-letter table ident, by offset.
func deadLetters(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []deadLetter {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []deadLetter
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) int { return r.Schema().FieldIndices(name)[0] }
		for i := 0; i < int(r.NumRows()); i++ {
			d := deadLetter{
				table:     r.Column(col(sink.DeadLetterTarget)).(*array.String).Value(i),
				source:    r.Column(col(sink.LateSource)).(*array.String).Value(i),
				partition: r.Column(col(sink.LateSourcePartition)).(*array.Int32).Value(i),
				offset:    r.Column(col(sink.LateOffset)).(*array.Int64).Value(i),
				reason:    r.Column(col(sink.DeadLetterReason)).(*array.String).Value(i),
			}
			if raw := r.Column(col(sink.DeadLetterRaw)).(*array.Binary); raw.IsValid(i) {
				d.raw = string(raw.Value(i))
			} else {
				d.raw = "<null>"
			}
			out = append(out, d)
		}
		r.Release()
	}
	slices.SortFunc(out, func(a, b deadLetter) int { return int(a.offset - b.offset) })
	return out
}

// deliverWithBad hands a sink offsets 0..5 of sp0, where offsets 2 and 5
// are messages the caller could not decode, and commits.
func deliverWithBad(ctx context.Context, s *sink.Sink) error {
	for _, step := range []struct {
		from, to int64 // good rows [from, to)
		bad      int64 // then this bad message
	}{{0, 2, 2}, {3, 5, 5}} {
		ms, offs := messages(sp0.Partition, step.from, step.to)
		rec := batch(ms)
		err := s.Write(ctx, sp0, offs, rec)
		rec.Release()
		if err != nil {
			return err
		}
		if err := s.Reject(ctx, sp0, step.bad, []byte(fmt.Sprintf("{bad %d", step.bad)), "not JSON"); err != nil {
			return err
		}
	}
	_, err := s.Commit(ctx)
	return err
}

// A message the caller rejects goes to the dead-letter table with its
// bytes, reason and position, once: a crash before the commit replays it,
// a redelivery after the commit drops it.
func TestDeadLetterOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithDeadLetter(deadIdent))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Start(ctx, sp0); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// A crash before the commit: nothing lands.
	s := open()
	ms, offs := messages(0, 0, 2)
	rec := batch(ms)
	if err := s.Write(ctx, sp0, offs, rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := s.Reject(ctx, sp0, 2, []byte("{bad 2"), "not JSON"); err != nil {
		t.Fatal(err)
	}
	if err := s.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if got := deadLetters(t, cat, deadIdent); len(got) != 0 {
		t.Fatalf("dead letters after a crash = %v, want none", got)
	}
	// The replay, then a redelivery of everything.
	for range 2 {
		s = open()
		if err := deliverWithBad(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.DeadLetters != 0 || st.Redelivered != 6 {
		t.Errorf("redelivery stats = %+v, want 0 dead letters, 6 redelivered", st)
	}
	if got, w := ids(t, cat, ident), []string{"p0-0", "p0-1", "p0-3", "p0-4"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	w := []deadLetter{
		{table: "db.events", source: sp0.Source, partition: 0, offset: 2, reason: "not JSON", raw: "{bad 2"},
		{table: "db.events", source: sp0.Source, partition: 0, offset: 5, reason: "not JSON", raw: "{bad 5"},
	}
	if got := deadLetters(t, cat, deadIdent); !slices.Equal(got, w) {
		t.Errorf("dead letters = %+v, want %+v", got, w)
	}
	// The position covers the last message, a dead letter.
	pos, err := sink.Positions(s.Table())
	if err != nil || pos[sp0] != 5 {
		t.Errorf("positions = %v, %v; want %s at 5", pos, err, sp0)
	}
}

// Without a dead-letter table a rejected message stops the stream with a
// typed error naming it; the rows before it can be committed, the table
// holds nothing of it, and a restart resumes just before it.
func TestRejectWithoutDeadLetterStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 2)
	err := s.Reject(ctx, sp0, 2, []byte(`{"id": 7}`), "field id: wrong type")
	var bad *sink.BadMessageError
	if !errors.Is(err, sink.ErrBadMessage) || !errors.As(err, &bad) || bad.Offset != 2 || bad.Source != sp0 {
		t.Fatalf("Reject = %v, want a BadMessageError at %s offset 2", err, sp0)
	}
	t.Log(err)
	mustCommit(t, s)
	if got, w := ids(t, cat, ident), want(0, 0, 2); !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	r, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
	if err != nil {
		t.Fatal(err)
	}
	if start, err := r.Start(ctx, sp0); err != nil || start[sp0] != 1 {
		t.Errorf("Start = %v, %v; want %s at 1 (the bad message is next)", start, err, sp0)
	}
	if _, err := cat.LoadTable(ctx, deadIdent); err == nil {
		t.Error("a dead-letter table was created without WithDeadLetter")
	}
	if _, err := sink.Open(ctx, cat, ident, sink.WithDeadLetter(ident)); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("dead-letter table = the table: %v, want ErrBadOption", err)
	}
}
