package sink_test

import (
	"context"
	"errors"
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

// A producer's duplicate sent to another source partition (a new offset
// there) is dropped: within a commit, against the rows the sink
// committed, and against the table after a restart.
func TestKeyedDedupesAcrossSourcePartitions(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	sp2 := sink.SourcePartition{Source: sp0.Source, Partition: 2}
	s := mustOpen(t, cat, ident, sink.WithKey("id"))
	send := func(s *sink.Sink, sp sink.SourcePartition, off int64, id string) {
		t.Helper()
		rec := batch([]msg{{id, off, day0}})
		defer rec.Release()
		if err := s.Write(ctx, sp, []int64{off}, rec); err != nil {
			t.Fatal(err)
		}
	}
	send(s, sp0, 0, "a")
	send(s, sp1, 0, "a") // within the commit
	mustCommit(t, s)
	send(s, sp1, 1, "b")
	send(s, sp0, 1, "b")
	mustCommit(t, s)
	send(s, sp0, 2, "a") // against what the sink committed
	mustCommit(t, s)
	r, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id"))
	if err != nil {
		t.Fatal(err)
	}
	send(r, sp2, 0, "b") // against the table
	send(r, sp2, 1, "c")
	mustCommit(t, r)
	if got, w := ids(t, cat, ident), []string{"a", "b", "c"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	if d := s.Stats().Duplicates + r.Stats().Duplicates; d != 4 {
		t.Errorf("duplicates = %d, want 4", d)
	}
}

// Two sinks owning two source partitions: a key the other sink committed
// after this one read the table's keys is not committed twice; the
// commit that would repeat it fails with ErrKeyCommitted, and the replay
// from the table's positions drops the duplicate.
func TestKeyedDedupesAcrossSinks(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(), open()
	send := func(s *sink.Sink, sp sink.SourcePartition, off int64, id string) {
		t.Helper()
		rec := batch([]msg{{id, off, day0}})
		defer rec.Release()
		if err := s.Write(ctx, sp, []int64{off}, rec); err != nil {
			t.Fatal(err)
		}
	}
	send(a, sp0, 0, "x")
	send(b, sp1, 0, "y") // b reads the day's keys now: none
	mustCommit(t, a)
	send(b, sp1, 1, "x") // the producer's duplicate, on b's partition
	_, err := b.Commit(ctx)
	if !errors.Is(err, sink.ErrKeyCommitted) {
		t.Fatalf("commit of a key another sink committed = %v, want ErrKeyCommitted", err)
	}
	start, err := b.Start(ctx, sp1)
	if err != nil {
		t.Fatal(err)
	}
	for off := start[sp1] + 1; off <= 1; off++ {
		send(b, sp1, off, []string{"y", "x"}[off])
	}
	mustCommit(t, b)
	if got, w := ids(t, cat, ident), []string{"x", "y"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}
