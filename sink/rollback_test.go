package sink_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// foreignAppend appends the messages at offsets [from, to) of part with
// iceberg-go's own append (another writer: no positions) and returns the
// snapshot it made.
func foreignAppend(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, part int32, from, to int64) int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := messages(part, from, to)
	rec := batch(ms)
	defer rec.Release()
	rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	tx := tbl.NewTransaction()
	if err := tx.Append(ctx, rdr, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err = tx.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.CurrentSnapshot().SnapshotID
}

// rollback sets main to snapshot id, as Spark's rollback_to_snapshot does.
func rollback(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, id int64) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	cur := tbl.CurrentSnapshot().SnapshotID
	if _, _, err := cat.CommitTable(ctx, ident,
		[]icetable.Requirement{icetable.AssertRefSnapshotID(icetable.MainBranch, &cur)},
		[]icetable.Update{icetable.NewSetSnapshotRefUpdate(icetable.MainBranch, id, icetable.BranchRef, -1, -1, -1)}); err != nil {
		t.Fatalf("rollback to %d: %v", id, err)
	}
}

// expire expires every snapshot but the last retain of main.
func expire(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, retain int) {
	t.Helper()
	w, err := table.Open(context.Background(), cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	if err := backfill.Expire(context.Background(), w, retain, 0); err != nil {
		t.Fatal(err)
	}
}

// expireAll expires, with iceberg-go's own expiry (another tool, as
// Spark's expire_snapshots), every snapshot but the last retain of main:
// those main was rolled back past too.
func expireAll(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, retain int) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(icetable.WithRetainLast(retain), icetable.WithOlderThan(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func currentSnapshot(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.CurrentSnapshot().SnapshotID
}

func start(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, sp sink.SourcePartition) (*sink.Sink, int64) {
	t.Helper()
	s := mustOpen(t, cat, ident)
	pos, err := s.Start(context.Background(), sp)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, pos[sp]
}

// A rollback of main to another writer's snapshot, past every sink
// commit, takes the positions back with the rows, also once the
// rolled-back snapshots were expired: the table property the sink commits
// set is not read (main's ancestry is complete and records none), Start
// returns -1 and the replay writes every row again, once.
func TestRollbackToForeignSnapshotMovesPositionsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		format  string
		expired bool
	}{{"rolled back", "2", false}, {"rolled back and expired", "2", true}, {"rolled back, format v1", "1", false}, {"rolled back and expired, format v1", "1", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := eventsTableOfFormat(t, cat, "events", tc.format)
			f := foreignAppend(t, cat, ident, 7, 0, 3)
			s := mustOpen(t, cat, ident)
			mustWrite(t, s, sp0, 0, 50)
			mustCommit(t, s)
			mustWrite(t, s, sp0, 50, 100)
			mustCommit(t, s)
			rollback(t, cat, ident, f)
			if tc.expired {
				expireAll(t, cat, ident, 1)
				tbl, _ := cat.LoadTable(context.Background(), ident)
				if n := len(tbl.Metadata().Snapshots()); n != 1 {
					t.Fatalf("%d snapshots after expiry, want 1", n)
				}
			}
			r, pos := start(t, cat, ident, sp0)
			if pos != -1 {
				t.Fatalf("Start after the rollback = %d, want -1 (the table holds none of %s's rows)", pos, sp0)
			}
			mustWrite(t, r, sp0, 0, 100)
			mustCommit(t, r)
			if got, w := ids(t, cat, ident), append(want(0, 0, 100), want(7, 0, 3)...); !slices.Equal(got, sorted(w)) {
				t.Errorf("ids %v, want %v", got, sorted(w))
			}
		})
	}
}

// eventsTableOfFormat is eventsTable in Iceberg format version v.
func eventsTableOfFormat(t *testing.T, cat catalog.Catalog, name, v string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	ident := catalogtest.CreateTable(t, cat, name, sch, spec, iceberg.Properties{"format-version": v})
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	if got := strconv.Itoa(tbl.Metadata().Version()); got != v {
		t.Fatalf("table format version %s, want %s", got, v)
	}
	return ident
}

func sorted(s []string) []string { slices.Sort(s); return s }

// A rollback of main to an earlier sink snapshot takes the positions back
// to that snapshot's: the replay writes the rolled-back rows again.
func TestRollbackToSinkSnapshotMovesPositionsBack(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	first := currentSnapshot(t, cat, ident)
	mustWrite(t, s, sp0, 10, 20)
	mustCommit(t, s)
	foreignAppend(t, cat, ident, 7, 0, 3)
	rollback(t, cat, ident, first)
	r, pos := start(t, cat, ident, sp0)
	if pos != 9 {
		t.Fatalf("Start after the rollback = %d, want 9", pos)
	}
	mustWrite(t, r, sp0, 0, 20)
	mustCommit(t, r)
	if got, w := ids(t, cat, ident), want(0, 0, 20); !slices.Equal(got, w) {
		t.Errorf("ids %v, want %v", got, w)
	}
}

// When main's sink snapshots were expired under other writers' snapshots,
// the positions come from the table property, whose recorded sequence
// number is below the oldest snapshot left on main.
func TestPositionsPropertyStandsInForExpiredAncestors(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	mustWrite(t, s, sp0, 10, 20)
	mustCommit(t, s)
	foreignAppend(t, cat, ident, 7, 0, 3)
	foreignAppend(t, cat, ident, 7, 3, 6)
	expire(t, cat, ident, 1)
	r, pos := start(t, cat, ident, sp0)
	if pos != 19 {
		t.Fatalf("Start after expiry = %d, want 19", pos)
	}
	mustWrite(t, r, sp0, 0, 25)
	mustCommit(t, r)
	if got, w := ids(t, cat, ident), sorted(append(want(0, 0, 25), want(7, 0, 6)...)); !slices.Equal(got, w) {
		t.Errorf("ids %v, want %v", got, w)
	}
}

// Every sink commit of a v2 table records, beside the positions
// property, the sequence number of the snapshot it adds.
func TestSinkRecordsPositionsSequence(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	for c := range int64(3) {
		mustWrite(t, s, sp0, c*10, c*10+10)
		mustCommit(t, s)
		foreignAppend(t, cat, ident, 7, c, c+1)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, snap := range tbl.Metadata().Snapshots() {
		if _, ok := snap.Summary.Properties[sink.SummaryPositions]; ok {
			last = snap.SequenceNumber
		}
	}
	raw, ok := tbl.Properties()[sink.PropertyPositionsSequence]
	if !ok {
		t.Fatalf("%s not set by the sink's commit", sink.PropertyPositionsSequence)
	}
	if raw != strconv.FormatInt(last, 10) {
		t.Errorf("%s = %s, want %d (the last sink snapshot's)", sink.PropertyPositionsSequence, raw, last)
	}
}

// A rollback of main past the sink's commits onto an ancestry whose older
// snapshots were expired leaves positions nobody knows: the property was
// set by a commit no longer on main, and the expired ancestors' positions
// are gone. Start fails with commit.ErrUnsupported instead of guessing
// (the property's positions would skip the rolled-back rows, none would
// repeat the expired ones).
func TestRollbackOverExpiredAncestryFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	f := foreignAppend(t, cat, ident, 7, 0, 3)
	mustWrite(t, s, sp0, 10, 20)
	mustCommit(t, s)
	expire(t, cat, ident, 2) // the first sink snapshot goes
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tbl.Properties()[sink.PropertyPositionsSequence]; !ok {
		t.Fatalf("%s not set by the sink's commit", sink.PropertyPositionsSequence)
	}
	rollback(t, cat, ident, f)
	if _, err := sink.Open(ctx, cat, ident); !errors.Is(err, commit.ErrUnsupported) {
		t.Errorf("Open after a rollback over an expired ancestry = %v, want commit.ErrUnsupported", err)
	}
	if _, err := s.Start(ctx, sp0); !errors.Is(err, commit.ErrUnsupported) {
		t.Errorf("Start after a rollback over an expired ancestry = %v, want commit.ErrUnsupported", err)
	}
}
