package sink_test

import (
	"context"
	"slices"
	"testing"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// A producer's duplicates (the same key at a new offset) are dropped
// within a commit and against the table, also by a restarted sink.
func TestKeyedDedupesProducerDuplicates(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	rec := batch([]msg{{"a", 0, day0}, {"b", 1, day0}, {"a", 2, day0}}) // a again, new offset
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1, 2}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	rec2 := batch([]msg{{"b", 3, day0}, {"c", 4, day0}})
	defer rec2.Release()
	if err := s.Write(ctx, sp0, []int64{3, 4}, rec2); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if st := s.Stats(); st.Duplicates != 2 {
		t.Errorf("duplicates = %d, want 2", st.Duplicates)
	}
	// A new sink reads the keys from the table.
	s2 := open()
	rec3 := batch([]msg{{"c", 5, day0}, {"d", 6, day0}})
	defer rec3.Release()
	if err := s2.Write(ctx, sp0, []int64{5, 6}, rec3); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s2)
	if got, w := ids(t, cat, ident), []string{"a", "b", "c", "d"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}
