package sink_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

var sp0 = sink.SourcePartition{Source: "test:events", Partition: 0}

// write hands the sink the messages at offsets [from, to) of sp.
func write(t *testing.T, s *sink.Sink, sp sink.SourcePartition, from, to int64) error {
	t.Helper()
	ms, offs := messages(sp.Partition, from, to)
	rec := batch(ms)
	defer rec.Release()
	return s.Write(context.Background(), sp, offs, rec)
}

func mustWrite(t *testing.T, s *sink.Sink, sp sink.SourcePartition, from, to int64) {
	t.Helper()
	if err := write(t, s, sp, from, to); err != nil {
		t.Fatalf("write %s [%d,%d): %v", sp, from, to, err)
	}
}

// mustOpen opens a sink of ident with opts.
func mustOpen(t testing.TB, cat catalog.Catalog, ident icetable.Identifier, opts ...sink.Option) *sink.Sink {
	t.Helper()
	s, err := sink.Open(context.Background(), cat, ident, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCommit(t *testing.T, s *sink.Sink) {
	t.Helper()
	if _, err := s.Commit(context.Background()); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func TestRedeliveryIsDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	mustWrite(t, s, sp0, 5, 15)  // 5..9 committed, redelivered
	mustWrite(t, s, sp0, 12, 15) // 12..14 pending, redelivered
	res, err := s.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.AddedRows != 5 {
		t.Errorf("second commit added %d rows, want 5", res.AddedRows)
	}
	if got, w := ids(t, cat, ident), want(0, 0, 15); !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	if st := s.Stats(); st.Redelivered != 8 || st.Appended != 15 || st.Commits != 2 {
		t.Errorf("stats = %+v, want 8 redelivered, 15 appended, 2 commits", st)
	}
	pos, err := sink.Positions(s.Table())
	if err != nil {
		t.Fatal(err)
	}
	if pos[sp0] != 14 {
		t.Errorf("Positions = %v, want %s at 14", pos, sp0)
	}
	// Everything redelivered: nothing to commit, no snapshot.
	mustWrite(t, s, sp0, 0, 15)
	if res, err := s.Commit(ctx); err != nil || res.SnapshotID != 0 {
		t.Errorf("commit of redeliveries = %+v, %v; want no snapshot", res, err)
	}
}

// A sink that dies with rows pending (files written, never committed)
// leaves the table as it was; the next sink resumes from the table.
func TestRestartResumesFromTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	a := mustOpen(t, cat, ident)
	mustWrite(t, a, sp0, 0, 10)
	mustCommit(t, a)
	mustWrite(t, a, sp0, 10, 20) // never committed: a "crashes"

	b, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
	if err != nil {
		t.Fatal(err)
	}
	start, err := b.Start(ctx, sp0)
	if err != nil {
		t.Fatal(err)
	}
	if start[sp0] != 9 {
		t.Fatalf("Start = %v, want %s at 9", start, sp0)
	}
	if got, w := ids(t, cat, ident), want(0, 0, 10); !slices.Equal(got, w) {
		t.Fatalf("after the crash: table ids = %v, want %v", got, w)
	}
	mustWrite(t, b, sp0, start[sp0]+1, 25)
	mustCommit(t, b)
	if got, w := ids(t, cat, ident), want(0, 0, 25); !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	_ = a.Abort(ctx)
}

// A sink whose source partition another sink committed since it started
// it (a zombie after a rebalance) fails with ErrFenced and commits nothing.
func TestZombieIsFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	zombie := mustOpen(t, cat, ident)
	owner, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, zombie, sp0, 0, 10)
	mustWrite(t, owner, sp0, 0, 12)
	mustCommit(t, owner)
	before := catalogtest.Snapshots(t, cat, ident)
	_, err = zombie.Commit(ctx)
	if !errors.Is(err, sink.ErrFenced) {
		t.Fatalf("zombie commit: %v, want ErrFenced", err)
	}
	if n := catalogtest.Snapshots(t, cat, ident); n != before {
		t.Errorf("snapshots = %d after the fenced commit, want %d", n, before)
	}
	if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, dir); len(orphans) > 0 {
		t.Errorf("the fenced commit left data files: %v", orphans)
	}
	// After Start, the zombie resumes where the table is.
	start, err := zombie.Start(ctx, sp0)
	if err != nil || start[sp0] != 11 {
		t.Fatalf("Start = %v, %v; want %s at 11", start, err, sp0)
	}
	mustWrite(t, zombie, sp0, 12, 14)
	mustCommit(t, zombie)
	if got, w := ids(t, cat, ident), want(0, 0, 14); !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

func TestCommitCadenceByRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithCommitRows(10))
	for o := int64(0); o < 25; o += 5 {
		mustWrite(t, s, sp0, o, o+5)
	}
	if st := s.Stats(); st.Commits != 2 || s.Pending() != 5 {
		t.Errorf("after 25 rows at 10 a commit: %d commits, %d pending; want 2 and 5", st.Commits, s.Pending())
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cat, ident); len(got) != 25 {
		t.Errorf("table holds %d rows, want 25", len(got))
	}
}

func TestBadInputAndOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	for name, opt := range map[string]sink.Option{
		"rows":     sink.WithCommitRows(0),
		"bytes":    sink.WithCommitBytes(-1),
		"interval": sink.WithCommitInterval(0),
		"lateness": sink.WithEventTime("event_time", -1),
		"column":   sink.WithEventTime("nope", 0),
		"key":      sink.WithKey("nope"),
	} {
		if _, err := sink.Open(ctx, cat, ident, opt); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("Open(%s) = %v, want ErrBadOption", name, err)
		}
	}
	s := mustOpen(t, cat, ident)
	ms, _ := messages(0, 0, 3)
	rec := batch(ms)
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{1}, rec); !errors.Is(err, sink.ErrBadInput) {
		t.Errorf("Write with 1 offset for 3 rows = %v, want ErrBadInput", err)
	}
}
