package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// hookLock is a commit lock (no mutual exclusion) whose next Lock runs
// the hook set with arm, once, before it returns: in a compaction, that is
// between its planning and its catalog commit.
type hookLock struct {
	mu    sync.Mutex
	hook  func()
	calls int
	fail  func(call int) error // when set, the error of the call-th Lock (1-based)
}

func (l *hookLock) arm(f func()) { l.mu.Lock(); l.hook = f; l.mu.Unlock() }

func (l *hookLock) Lock(context.Context, icetable.Identifier) (func(), error) {
	l.mu.Lock()
	f := l.hook
	l.hook = nil
	l.calls++
	call, fail := l.calls, l.fail
	l.mu.Unlock()
	if f != nil {
		f()
	}
	if fail != nil {
		if err := fail(call); err != nil {
			return nil, err
		}
	}
	return func() {}, nil
}

// morEventsTable is eventsTable with merge-on-read deletes, on format
// version v.
func morEventsTable(t *testing.T, cat catalog.Catalog, v int) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	return catalogtest.CreateTable(t, cat, fmt.Sprintf("events_v%d", v), sch, spec, iceberg.Properties{
		"format-version": fmt.Sprint(v), "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read", "write.merge.mode": "merge-on-read",
	})
}

// idKeys is a one-column record reader of the ids.
func idKeys(ids ...string) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.StringBuilder).Append(id)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	r, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return r
}

// rowsBySeq reads the table's rows as id -> the seq values of its rows.
func rowsBySeq(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "seq")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int64{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		idc := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.String)
		seqc := rec.Column(rec.Schema().FieldIndices("seq")[0]).(*array.Int64)
		for i := range idc.Len() {
			out[idc.Value(i)] = append(out[idc.Value(i)], seqc.Value(i))
		}
		rec.Release()
	}
	return out
}

// A merge-on-read delete or upsert that commits while the sink's
// compaction of the same partition is between its planning and its
// commit is never undone: the compaction plans again on the new state,
// so the deleted rows stay deleted and an upserted key holds its new row
// only, on format v2 (position delete files) and v3 (deletion vectors).
func TestSinkCompactionKeepsConcurrentRowDeletes(t *testing.T) {
	t.Parallel()
	for _, v := range []int{2, 3} {
		for _, op := range []string{"delete", "upsert"} {
			t.Run(fmt.Sprintf("v%d/%s", v, op), func(t *testing.T) {
				ctx := context.Background()
				cat, dir := catalogtest.New(t)
				ident := morEventsTable(t, cat, v)
				lock := &hookLock{}
				s := mustOpen(t, cat, ident, sink.WithCommitLock(lock))
				for _, r := range [][2]int64{{0, 5}, {5, 10}} { // two commits: two files in day 0
					mustWrite(t, s, sp0, r[0], r[1])
					if _, err := s.Commit(ctx); err != nil {
						t.Fatal(err)
					}
				}
				w, err := table.Open(ctx, catalogtest.Open(t, dir), ident)
				if err != nil {
					t.Fatal(err)
				}
				key, err := s.Key("event_day=2026-07-14")
				if err != nil {
					t.Fatal(err)
				}
				var changed error
				lock.arm(func() {
					switch op {
					case "delete":
						_, changed = w.Delete(ctx, key, idKeys("p0-0", "p0-3", "p0-6"), "id")
					case "upsert":
						ms, _ := messages(0, 0, 10)
						up := []msg{{ms[0].id, 100, ms[0].at}, {ms[3].id, 103, ms[3].at}, {ms[6].id, 106, ms[6].at}}
						rec := batch(up)
						rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
						rec.Release()
						_, changed = w.Upsert(ctx, rr, "id")
					}
				})
				res, err := s.Compact(ctx, key)
				if changed != nil {
					t.Fatalf("the concurrent %s: %v", op, changed)
				}
				if err != nil {
					t.Fatalf("compaction: %v", err)
				}
				if res.Unchanged {
					t.Errorf("compaction result Unchanged, want a compaction on the new state")
				}
				got := rowsBySeq(t, cat, ident)
				for i := range int64(10) {
					id := fmt.Sprintf("p0-%d", i)
					wantSeq := []int64{i}
					if i%3 == 0 && i < 9 {
						wantSeq = nil
						if op == "upsert" {
							wantSeq = []int64{100 + i}
						}
					}
					if !slices.Equal(got[id], wantSeq) {
						t.Errorf("%s: rows with seq %v, want %v", id, got[id], wantSeq)
					}
				}
				if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, dir); len(orphans) > 0 {
					t.Errorf("files referenced by no snapshot: %v", orphans)
				}
			})
		}
	}
}

// A zombie sink that compacts between its Write and its Commit is still
// fenced: the compaction does not move the marks its pending rows were
// checked against.
func TestCompactDoesNotDisarmTheFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	a := mustOpen(t, cat, ident)
	b := mustOpen(t, catalogtest.Open(t, dir), ident)
	if _, err := a.Start(ctx, sp0); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, a, sp0, 0, 100) // a, the old owner, pending
	if _, err := b.Start(ctx, sp0); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, b, sp0, 0, 150) // b, the new owner, commits
	if _, err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	key, err := a.Key("event_day=2026-07-14")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Compact(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx); !errors.Is(err, sink.ErrFenced) {
		t.Errorf("the zombie's commit after a compaction: %v, want ErrFenced", err)
	}
	if got := ids(t, cat, ident); !slices.Equal(got, want(0, 0, 150)) {
		t.Errorf("table holds %d rows, want offsets 0..149 once each", len(got))
	}
}

// A snapshot expiry that fails after a commit landed does not fail the
// commit (its rows and positions are in the table): it is logged and
// counted, and runs under the sink's commit lock.
func TestExpiryFailureIsNotTheCommitsError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	errLockDown := errors.New("lock service down")
	lock := &hookLock{}
	s := mustOpen(t, cat, ident, sink.WithCommitLock(lock), sink.WithSnapshotExpiry(1, 0, 1),
		sink.WithRetry(commitPolicyFast()))
	mustWrite(t, s, sp0, 0, 10)
	lock.mu.Lock()
	before := lock.calls
	lock.fail = func(call int) error {
		if call > before+1 { // the append's attempt takes the lock, then the expiry
			return errLockDown
		}
		return nil
	}
	lock.mu.Unlock()
	res, err := s.Commit(ctx)
	if err != nil {
		t.Fatalf("commit whose rows landed returned %v", err)
	}
	if res.SnapshotID == 0 {
		t.Error("commit result names no snapshot")
	}
	if st := s.Stats(); st.MaintenanceFailures != 1 || st.Commits != 1 {
		t.Errorf("stats %+v, want 1 commit and 1 maintenance failure", st)
	}
	if lock.calls < before+2 {
		t.Errorf("the expiry did not take the commit lock (%d lock calls for the commit)", lock.calls-before)
	}
	if got := ids(t, cat, ident); len(got) != 10 {
		t.Errorf("table holds %d rows, want 10", len(got))
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if pos, err := sink.Positions(tbl); err != nil || pos[sp0] != 9 {
		t.Errorf("positions %v, %v; want %s at 9", pos, err, sp0)
	}
}

// A compaction of a closed partition that fails after a commit landed
// does not fail the commit either, and is tried again after the next one.
func TestCompactionFailureIsNotTheCommitsError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	errLockDown := errors.New("lock service down")
	lock := &hookLock{}
	s := mustOpen(t, cat, ident, sink.WithEventTime("event_time", time.Hour), sink.WithCommitRows(1),
		sink.WithCommitLock(lock), sink.WithoutSnapshotExpiry(), sink.WithRetry(commitPolicyFast()))
	for o := int64(0); o < 3; o++ { // three files in day 0
		mustWrite(t, s, sp0, o, o+1)
	}
	lock.mu.Lock()
	before := lock.calls
	lock.fail = func(call int) error {
		if call > before+1 { // the append, then the compaction's attempts
			return errLockDown
		}
		return nil
	}
	lock.mu.Unlock()
	rec := batch([]msg{{"next", 99, day0.Add(26 * time.Hour)}}) // closes day 0
	err := s.Write(ctx, sp0, []int64{3}, rec)
	rec.Release()
	if err != nil {
		t.Fatalf("write (committing) whose rows landed returned %v", err)
	}
	if st := s.Stats(); st.Compactions != 0 || st.MaintenanceFailures != 1 || st.Commits != 4 {
		t.Errorf("stats %+v, want 4 commits, no compaction, 1 maintenance failure", st)
	}
	lock.mu.Lock()
	lock.fail = nil
	lock.mu.Unlock()
	rec = batch([]msg{{"next2", 100, day0.Add(27 * time.Hour)}})
	err = s.Write(ctx, sp0, []int64{4}, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Compactions != 1 {
		t.Errorf("stats %+v, want the compaction made after the next commit", st)
	}
	if got := ids(t, cat, ident); len(got) != 5 {
		t.Errorf("table holds %d rows, want 5", len(got))
	}
}

// commitPolicyFast is a retry policy of short backoffs.
func commitPolicyFast() commit.Policy {
	return commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 20 * time.Second}
}
