package sink_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	"github.com/icerun/icerun/table"
)

// orderEvent is one change of an order: its state at ts.
type orderEvent struct {
	id     string
	status string
	ts     time.Duration // after day0
}

var upsertSpec = table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"ts"}, Delete: table.DeleteWhen{Column: "status", Value: "deleted"}}

// ordersTable creates db.<name>: order_id, status, ts, unpartitioned, of
// format version v, merge-on-read or not.
func ordersTable(t testing.TB, cat catalog.Catalog, name string, v int, mor bool) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	)
	props := iceberg.Properties{"format-version": fmt.Sprint(v)}
	if mor {
		props[table.PropertyUpsertMode] = table.ModeMergeOnRead
	}
	return catalogtest.CreateTable(t, cat, name, sch, *iceberg.UnpartitionedSpec, props)
}

func orderBatch(evs []orderEvent) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_id", Type: arrow.BinaryTypes.String},
		{Name: "status", Type: arrow.BinaryTypes.String},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, e := range evs {
		b.Field(0).(*array.StringBuilder).Append(e.id)
		b.Field(1).(*array.StringBuilder).Append(e.status)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(day0.Add(e.ts).UnixMicro()))
	}
	return b.NewRecordBatch()
}

// writeEvents hands evs to s as the messages at offsets from, from+1, ...
// of sp0.
func writeEvents(t *testing.T, s *sink.Sink, from int64, evs ...orderEvent) {
	t.Helper()
	rec := orderBatch(evs)
	defer rec.Release()
	offs := make([]int64, len(evs))
	for i := range offs {
		offs[i] = from + int64(i)
	}
	if err := s.Write(context.Background(), sp0, offs, rec); err != nil {
		t.Fatalf("write at %d: %v", from, err)
	}
}

// states reads order_id -> status of the table.
func states(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]string {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	_, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		id := rec.Column(rec.Schema().FieldIndices("order_id")[0]).(*array.String)
		st := rec.Column(rec.Schema().FieldIndices("status")[0]).(*array.String)
		for i := 0; i < id.Len(); i++ {
			if _, dup := out[id.Value(i)]; dup {
				t.Errorf("order %s twice in the table", id.Value(i))
			}
			out[id.Value(i)] = st.Value(i)
		}
		rec.Release()
	}
	return out
}

// upsertModes are the table layouts every upsert sink test runs on.
var upsertModes = []struct {
	name string
	v    int
	mor  bool
}{{"cow-v2", 2, false}, {"mor-v2", 2, true}, {"mor-v3", 3, true}, {"cow-v3", 3, false}}

func TestUpsertSinkOrder(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
			// a: created, shipped; then a late "paid" older than shipped.
			// b: created then deleted; then a late "paid" older than the delete.
			// c: two events of one ts in one commit: the later offset wins.
			writeEvents(t, s, 0,
				orderEvent{"a", "created", time.Hour},
				orderEvent{"a", "shipped", 3 * time.Hour},
				orderEvent{"b", "created", time.Hour},
				orderEvent{"c", "first", time.Hour},
				orderEvent{"c", "second", time.Hour})
			mustCommit(t, s)
			writeEvents(t, s, 5, orderEvent{"b", "deleted", 4 * time.Hour})
			mustCommit(t, s)
			writeEvents(t, s, 6,
				orderEvent{"a", "paid", 2 * time.Hour},
				orderEvent{"b", "paid", 2 * time.Hour})
			mustCommit(t, s) // all stale: positions only
			writeEvents(t, s, 8, orderEvent{"d", "created", time.Hour})
			mustCommit(t, s) // not fenced by the positions-only commit before it
			if got, w := states(t, cat, ident), map[string]string{"a": "shipped", "c": "second", "d": "created"}; !maps.Equal(got, w) {
				t.Errorf("table = %v, want %v", got, w)
			}
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			pos, err := sink.Positions(tbl)
			if err != nil || pos[sp0] != 8 {
				t.Errorf("Positions = %v, %v; want %s at 8", pos, err, sp0)
			}
			// The tombstone table's commits, made under the same call,
			// record no positions.
			tombs, err := cat.LoadTable(ctx, table.TombstoneTable(ident))
			if err != nil {
				t.Fatal(err)
			}
			for _, snap := range tombs.Metadata().Snapshots() {
				if _, ok := snap.Summary.Properties[sink.SummaryPositions]; ok {
					t.Errorf("tombstone snapshot %d records %s", snap.SnapshotID, sink.SummaryPositions)
				}
			}
		})
	}
}

func TestUpsertSinkRedeliveryDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, true)
	s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
	writeEvents(t, s, 0, orderEvent{"a", "created", time.Hour}, orderEvent{"a", "shipped", 2 * time.Hour})
	mustCommit(t, s)
	// A newer state, then the redelivery of offsets 0 and 1 with a
	// rewritten order that would win if it were applied.
	writeEvents(t, s, 2, orderEvent{"a", "refunded", 5 * time.Hour})
	mustCommit(t, s)
	before := catalogtest.Snapshots(t, cat, ident)
	writeEvents(t, s, 0, orderEvent{"a", "created", 9 * time.Hour}, orderEvent{"a", "shipped", 9 * time.Hour})
	res, err := s.Commit(ctx)
	if err != nil || res.SnapshotID != 0 {
		t.Fatalf("commit of redelivered rows = %+v, %v; want nothing committed", res, err)
	}
	if got := s.Stats().Redelivered; got != 2 {
		t.Errorf("Redelivered = %d, want 2", got)
	}
	if n := catalogtest.Snapshots(t, cat, ident); n != before {
		t.Errorf("snapshots = %d, want %d", n, before)
	}
	if got, w := states(t, cat, ident), map[string]string{"a": "refunded"}; !maps.Equal(got, w) {
		t.Errorf("table = %v, want %v", got, w)
	}
}

// TestUpsertSinkCrashReplay: a sink that wrote its rows and died before
// its commit, and one that committed and died before its source heard
// of it: a new sink replays from the table's positions and the table
// ends as a clean run leaves it.
func TestUpsertSinkCrashReplay(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			evs := []orderEvent{
				{"a", "created", time.Hour}, {"b", "created", time.Hour}, {"a", "paid", 2 * time.Hour},
				{"b", "deleted", 3 * time.Hour}, {"a", "shipped", 4 * time.Hour}, {"c", "created", 5 * time.Hour},
				{"b", "paid", 2 * time.Hour}, {"a", "paid", 2 * time.Hour},
			}
			run := func(t *testing.T, crash func(t *testing.T, cat catalog.Catalog, dir string, ident icetable.Identifier)) map[string]string {
				cat, dir := catalogtest.New(t)
				ident := ordersTable(t, cat, "orders", m.v, m.mor)
				if crash != nil {
					crash(t, cat, dir, ident)
				}
				s := mustOpen(t, catalogtest.Open(t, dir), ident, sink.WithUpsert(upsertSpec))
				start, err := s.Start(ctx, sp0)
				if err != nil {
					t.Fatal(err)
				}
				for i := start[sp0] + 1; i < int64(len(evs)); i += 3 {
					writeEvents(t, s, i, evs[i:min(i+3, int64(len(evs)))]...)
					mustCommit(t, s)
				}
				return states(t, cat, ident)
			}
			clean := run(t, nil)
			if w := map[string]string{"a": "shipped", "c": "created"}; !maps.Equal(clean, w) {
				t.Fatalf("clean run = %v, want %v", clean, w)
			}
			uncommitted := run(t, func(t *testing.T, cat catalog.Catalog, dir string, ident icetable.Identifier) {
				s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
				writeEvents(t, s, 0, evs[:3]...)
				mustCommit(t, s)
				writeEvents(t, s, 3, evs[3:]...) // dies before its commit
			})
			if !maps.Equal(uncommitted, clean) {
				t.Errorf("after a crash before the commit = %v, want %v", uncommitted, clean)
			}
			committed := run(t, func(t *testing.T, cat catalog.Catalog, dir string, ident icetable.Identifier) {
				s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
				writeEvents(t, s, 0, evs[:6]...)
				mustCommit(t, s) // its source never hears of it: the replay is from the table's positions
			})
			if !maps.Equal(committed, clean) {
				t.Errorf("after a crash after the commit = %v, want %v", committed, clean)
			}
		})
	}
}

// TestUpsertSinkZombieFenced: two sinks own one source partition, the
// older one commits after the newer: it is fenced, and the tombstone it
// wrote before its table commit was refused is a delete the stream holds,
// so the owner ends where a clean run ends.
func TestUpsertSinkZombieFenced(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			cat, dir := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			evs := []orderEvent{{"a", "created", time.Hour}, {"b", "created", time.Hour}, {"b", "deleted", 2 * time.Hour}, {"a", "paid", 3 * time.Hour}}
			zombie := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
			owner := mustOpen(t, catalogtest.Open(t, dir), ident, sink.WithUpsert(upsertSpec))
			writeEvents(t, zombie, 0, evs[:3]...)
			writeEvents(t, owner, 0, evs[:2]...)
			mustCommit(t, owner)
			before := catalogtest.Snapshots(t, cat, ident)
			_, err := zombie.Commit(ctx)
			if !errors.Is(err, sink.ErrFenced) {
				t.Fatalf("zombie commit: %v, want ErrFenced", err)
			}
			if n := catalogtest.Snapshots(t, cat, ident); n != before {
				t.Errorf("snapshots = %d after the fenced commit, want %d", n, before)
			}
			if got, w := states(t, cat, ident), map[string]string{"a": "created", "b": "created"}; !maps.Equal(got, w) {
				t.Errorf("table after the fenced commit = %v, want %v", got, w)
			}
			writeEvents(t, owner, 2, evs[2:]...)
			mustCommit(t, owner)
			if got, w := states(t, cat, ident), map[string]string{"a": "paid"}; !maps.Equal(got, w) {
				t.Errorf("table = %v, want %v", got, w)
			}
			if got := zombie.Stats().Fenced; got != 1 {
				t.Errorf("zombie Stats().Fenced = %d, want 1", got)
			}
		})
	}
}

func TestUpsertSinkBadOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, false)
	bad := map[string][]sink.Option{
		"with key":                    {sink.WithUpsert(upsertSpec), sink.WithKey("order_id")},
		"no order":                    {sink.WithUpsert(table.ChangeSpec{Key: []string{"order_id"}})},
		"no key":                      {sink.WithUpsert(table.ChangeSpec{Order: []string{"ts"}})},
		"unknown order":               {sink.WithUpsert(table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"nope"}})},
		"retention on a string order": {sink.WithUpsert(table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"status", "ts"}, Retention: time.Hour})},
	}
	for name, opts := range bad {
		if _, err := sink.Open(ctx, cat, ident, opts...); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("%s: Open = %v, want ErrBadOption", name, err)
		}
	}
	// A retention needs a timestamp or date first order column: the
	// table's own check, with its typed error.
	cs := table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"status"}, Retention: time.Hour}
	if _, err := sink.Open(ctx, cat, ident, sink.WithUpsert(cs)); !errors.Is(err, table.ErrBadChangeSpec) {
		t.Errorf("Open(retention on a string order) = %v, want ErrBadChangeSpec", err)
	}
}

// With a retention, an event older than the bound for a key the table
// does not know goes to the late table, not to the table; one within the
// bound is applied.
func TestUpsertSinkRetention(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, true)
	cs := upsertSpec
	cs.Retention = 24 * time.Hour
	s := mustOpen(t, cat, ident, sink.WithUpsert(cs))
	writeEvents(t, s, 0, orderEvent{"a", "created", 48 * time.Hour})
	mustCommit(t, s)
	writeEvents(t, s, 1, orderEvent{"z", "created", time.Hour}, orderEvent{"y", "created", 40 * time.Hour})
	mustCommit(t, s)
	if got, w := states(t, cat, ident), map[string]string{"a": "created", "y": "created"}; !maps.Equal(got, w) {
		t.Errorf("table = %v, want %v", got, w)
	}
	if got, w := states(t, cat, table.LateTable(ident)), map[string]string{"z": "created"}; !maps.Equal(got, w) {
		t.Errorf("late table = %v, want %v", got, w)
	}
}
