//go:build interop

package interop

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/table"
)

// cdcEvent is one change of an order: its key, its partition (region),
// its state, and its order (event_ts minutes after cdcT0, then seq).
type cdcEvent struct {
	id             int64
	region, status string
	amount         int64
	minute, seq    int64
}

var cdcT0 = time.Date(2026, 7, 14, 9, 0, 0, 0, time.UTC)

var cdcFields = []arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}

func (e cdcEvent) ts() time.Time { return cdcT0.Add(time.Duration(e.minute) * time.Minute) }

// older is e < o in the change order (event_ts, then seq).
func (e cdcEvent) older(o cdcEvent) bool {
	return cmp.Or(cmp.Compare(e.minute, o.minute), cmp.Compare(e.seq, o.seq)) < 0
}

func cdcBatch(evs []cdcEvent) arrow.RecordBatch {
	return batch(cdcFields, len(evs), func(b *array.RecordBuilder, i int) {
		e := evs[i]
		b.Field(0).(*array.Int64Builder).Append(e.id)
		b.Field(1).(*array.StringBuilder).Append(e.region)
		b.Field(2).(*array.StringBuilder).Append(e.status)
		b.Field(3).(*array.Int64Builder).Append(e.amount)
		ts, _ := arrow.TimestampFromTime(e.ts(), arrow.Microsecond)
		b.Field(4).(*array.TimestampBuilder).Append(ts)
		b.Field(5).(*array.Int64Builder).Append(e.seq)
	})
}

// cdcModel is the latest state the change stream leads to: per key, the
// greatest change seen (a delete included: the tombstone), applied only
// when newer than the one held.
type cdcModel map[int64]cdcEvent

// apply applies one call's events and returns how many input keys are
// stale (their winning change not newer than the one held).
func (m cdcModel) apply(evs []cdcEvent) (stale int64) {
	win := map[int64]cdcEvent{}
	for _, e := range evs { // the greatest order wins; among equal ones the last
		if w, ok := win[e.id]; !ok || !e.older(w) {
			win[e.id] = e
		}
	}
	for id, w := range win {
		if held, ok := m[id]; ok && !held.older(w) {
			stale++
			continue
		}
		m[id] = w
	}
	return stale
}

// live is the table's expected rows: the keys whose latest change is not
// a delete, those keep selects.
func (m cdcModel) live(keep func(cdcEvent) bool) []Row {
	var evs []cdcEvent
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if e := m[id]; e.status != "deleted" && (keep == nil || keep(e)) {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return RowsOf(cdcBatch(evs))
}

// cdcSteps are the calls of the change stream, in order: each names what
// it shows.
func cdcSteps() []struct {
	name string
	evs  []cdcEvent
} {
	var created, paid []cdcEvent
	for id := int64(1); id <= 40; id++ {
		created = append(created, cdcEvent{id, []string{"eu", "us"}[id%2], "created", 100 * id, id, 1})
	}
	for id := int64(1); id <= 10; id++ {
		paid = append(paid, cdcEvent{id, []string{"eu", "us"}[id%2], "paid", 100 * id, 100 + id, 1})
	}
	paid[4].region = "apac" // order 5 changes partition
	for id := int64(41); id <= 50; id++ {
		paid = append(paid, cdcEvent{id, "eu", "created", 100 * id, 100 + id, 1})
	}
	paid = append(paid,
		cdcEvent{7, "us", "paid", 701, 107, 1},     // a tie with order 7's paid row above: the last wins
		cdcEvent{3, "us", "shipped", 300, 150, 1},  // two changes of order 3 in one call: the greater wins,
		cdcEvent{3, "us", "paid", 301, 120, 1},     // whatever the input order
		cdcEvent{8, "eu", "shipped", 800, 108, 2},  // the same event_ts as its paid row, a greater seq
		cdcEvent{9, "us", "refunded", 900, 109, 0}, // the same event_ts as its paid row, a lower seq: loses
	)
	deletes := []cdcEvent{
		{20, "eu", "deleted", 0, 10, 1},     // older than order 20's creation: stale
		{99, "eu", "deleted", 0, 200, 1},    // a key the table never held: a tombstone only
		{6, "apac", "shipped", 600, 210, 1}, // an upsert in the same snapshot, moving partition
	}
	for id := int64(11); id <= 15; id++ {
		deletes = append(deletes, cdcEvent{id, "us", "deleted", 0, 200, 1})
	}
	late := []cdcEvent{
		{1, "us", "created", 1, 0, 1},         // redelivered creation: stale
		{11, "us", "paid", 1111, 150, 1},      // older than its delete: stays deleted
		{12, "apac", "shipped", 1212, 250, 1}, // newer than its delete: back, in another partition
		{99, "eu", "created", 9999, 5, 1},     // older than the tombstone of a key never held
		{5, "eu", "paid", 5555, 50, 1},        // late and older, in the old partition: order 5 stays in apac
		{30, "eu", "changed", 3030, 30, 1},    // the same order as the held row: not newer
		{13, "eu", "deleted", 0, 190, 1},      // an older delete of a deleted key
	}
	return []struct {
		name string
		evs  []cdcEvent
	}{
		{"created", created},
		{"upserts, ties, a partition change", paid},
		{"deletes and an upsert in one call", deletes},
		{"late and older events", late},
		{"redelivery of the upserts", paid},
	}
}

// TestChangelogRead: a change stream applied by ApplyChanges (upserts,
// deletes, ties, late older events, redeliveries, keys that change
// partition) on copy-on-write and merge-on-read tables, format v2 and
// v3, leaves a table that Spark and PyIceberg read, after every call, as
// exactly the latest state of each key, and with filters on the key, the
// partition column and the order column at the end. The tombstones are a
// table of their own: no row, column or file of it is in the table's
// scans and metadata. Merge-on-read writes position deletes (v2) or
// deletion vectors (v3) and never equality deletes; copy-on-write no
// delete file.
func TestChangelogRead(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		for _, v := range []int{2, 3} {
			for _, mode := range []string{table.ModeCopyOnWrite, table.ModeMergeOnRead} {
				t.Run(fmt.Sprintf("v%d/%s", v, mode), func(t *testing.T) { runChangelogRead(t, e, c, v, mode) })
			}
		}
	})
}

func runChangelogRead(t *testing.T, e *Engines, c *Catalog, v int, mode string) {
	ctx := context.Background()
	name := fmt.Sprintf("orders_v%d_%s", v, mode[:3])
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: "amount", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 5, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 6, Name: "seq", Type: iceberg.PrimitiveTypes.Int64},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	c.CreateTable(t, name, sch, spec, iceberg.Properties{"format-version": fmt.Sprint(v), table.PropertyUpsertMode: mode,
		"write.merge.mode": mode, "write.update.mode": mode, "write.delete.mode": mode})
	w := open(t, c, name)
	cs := table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"event_ts", "seq"},
		Delete: table.DeleteWhen{Column: "status", Value: "deleted"}}
	m := cdcModel{}
	full := c.Spark(name)
	for i, step := range cdcSteps() {
		snaps := len(c.Snapshots(t, name))
		wantStale := m.apply(step.evs)
		res, err := w.ApplyChanges(ctx, reader(t, cdcBatch(step.evs)), cs)
		if err != nil {
			t.Fatalf("step %d (%s): ApplyChanges: %v", i+1, step.name, err)
		}
		if res.Stale != wantStale {
			t.Errorf("step %d (%s): Stale = %d, want %d", i+1, step.name, res.Stale, wantStale)
		}
		wantSnaps := snaps + 1
		if step.name == "redelivery of the upserts" {
			wantSnaps = snaps
			if !res.Unchanged {
				t.Errorf("step %d (%s): Unchanged = false, want true (every key stale)", i+1, step.name)
			}
		}
		if got := len(c.Snapshots(t, name)); got != wantSnaps {
			t.Errorf("step %d (%s): %d snapshots after %d, want %d: one per call that changes the table", i+1, step.name, got, snaps, wantSnaps)
		}
		want := m.live(nil)
		got := e.Batch(t, []Request{SparkSQL("SELECT * FROM " + full), PyIcebergScan(c.Name, c.Py(name), Scan{})})
		SameRows(t, fmt.Sprintf("step %d (%s): spark full scan", i+1, step.name), want, got[0].Named())
		SameRows(t, fmt.Sprintf("step %d (%s): pyiceberg full scan", i+1, step.name), want, got[1].Named())
	}

	// Filters on the key, the partition column and the order column.
	after := cdcT0.Add(200 * time.Minute)
	tsAfter, _ := arrow.TimestampFromTime(after, arrow.Microsecond)
	filters := []struct {
		name  string
		sql   string
		py    Expr
		keep  func(cdcEvent) bool
		wantN int // at least this many rows, so that a filter that drops all is seen
	}{
		{"order_id = 5", "order_id = 5", Cmp("order_id", "eq", "i:5"), func(e cdcEvent) bool { return e.id == 5 }, 1},
		{"order_id = 12", "order_id = 12", Cmp("order_id", "eq", "i:12"), func(e cdcEvent) bool { return e.id == 12 }, 1},
		{"order_id in 9..16", "order_id >= 9 AND order_id <= 16", And(Cmp("order_id", "ge", "i:9"), Cmp("order_id", "le", "i:16")),
			func(e cdcEvent) bool { return e.id >= 9 && e.id <= 16 }, 4},
		{"region = apac", "region = 'apac'", Cmp("region", "eq", "s:apac"), func(e cdcEvent) bool { return e.region == "apac" }, 3},
		{"region = eu", "region = 'eu'", Cmp("region", "eq", "s:eu"), func(e cdcEvent) bool { return e.region == "eu" }, 10},
		{"event_ts >= 200 min", fmt.Sprintf("event_ts >= TIMESTAMP '%s'", after.Format("2006-01-02 15:04:05")),
			Cmp("event_ts", "ge", fmt.Sprintf("ts:%d", int64(tsAfter))), func(e cdcEvent) bool { return e.minute >= 200 }, 2},
		{"event_ts < 100 min", fmt.Sprintf("event_ts < TIMESTAMP '%s'", cdcT0.Add(100*time.Minute).Format("2006-01-02 15:04:05")),
			Cmp("event_ts", "lt", fmt.Sprintf("ts:%d", int64(tsAfter)-100*60_000_000)), func(e cdcEvent) bool { return e.minute < 100 }, 10},
	}
	var reqs []Request
	for _, f := range filters {
		reqs = append(reqs, SparkSQL("SELECT * FROM "+full+" WHERE "+f.sql), PyIcebergScan(c.Name, c.Py(name), Scan{Where: f.py}))
	}
	got := e.Batch(t, reqs)
	for i, f := range filters {
		want := m.live(f.keep)
		if len(want) < f.wantN {
			t.Fatalf("filter %s: the model holds %d rows, the test wants at least %d: fix the steps", f.name, len(want), f.wantN)
		}
		SameRows(t, "spark, "+f.name, want, got[2*i].Named())
		SameRows(t, "pyiceberg, "+f.name, want, got[2*i+1].Named())
	}
	stats.add(1, 2*len(cdcSteps())+len(reqs))

	checkTombstonesApart(t, e, c, name, v, mode)
}

// checkTombstonesApart checks that the tombstone table is a table of its
// own: it holds the deleted keys, and neither its columns nor its files
// are in the table's scans and metadata; and the table's delete files.
func checkTombstonesApart(t *testing.T, e *Engines, c *Catalog, name string, v int, mode string) {
	t.Helper()
	tomb := table.TombstoneTable(c.Ident(name))
	tombName := tomb[len(tomb)-1]
	full, tombFull := c.Spark(name), c.Spark(tombName)
	res := e.Batch(t, []Request{
		SparkSQL("SELECT order_id FROM " + tombFull),
		SparkSQL("SELECT file_path FROM " + full + ".all_files"),
		SparkSQL("SELECT file_path FROM " + tombFull + ".all_files"),
		SparkSQL("SELECT content, file_format FROM " + full + ".delete_files"),
		PyIcebergScan(c.Name, c.Py(name), Scan{Filter: "order_id = 99"}),
		SparkSQL("DESCRIBE TABLE " + full),
	})
	ids := map[int64]bool{}
	for _, r := range res[0].Named() {
		ids[r.Int("order_id")] = true
	}
	for _, id := range []int64{11, 13, 14, 15, 99} {
		if !ids[id] {
			t.Errorf("tombstone table %s: no tombstone of deleted order %d (holds %v)", tombName, id, ids)
		}
	}
	mine := map[string]bool{}
	for _, r := range res[1].Named() {
		mine[r.Str("file_path")] = true
	}
	for _, r := range res[2].Named() {
		if p := r.Str("file_path"); mine[p] {
			t.Errorf("a file of the tombstone table is in %s's metadata: %s", name, p)
		}
	}
	if len(res[2].Named()) == 0 {
		t.Errorf("tombstone table %s has no files", tombName)
	}
	if rows := res[4].Named(); len(rows) != 0 {
		t.Errorf("pyiceberg: order_id = 99 (only ever a tombstone) reads %v from %s", rows, name)
	}
	var cols []string
	for _, r := range res[5].Named() {
		col := r.Str("col_name")
		if col == "" || strings.HasPrefix(col, "#") {
			break
		}
		cols = append(cols, col)
	}
	if want := []string{"order_id", "region", "status", "amount", "event_ts", "seq"}; !slices.Equal(cols, want) {
		t.Errorf("DESCRIBE %s: columns %v, want %v", name, cols, want)
	}
	dels := res[3].Named()
	if mode == table.ModeCopyOnWrite {
		if len(dels) != 0 {
			t.Errorf("copy-on-write %s: %d delete files, want none: %v", name, len(dels), dels)
		}
		return
	}
	if len(dels) == 0 {
		t.Errorf("merge-on-read %s: no delete files", name)
	}
	for _, d := range dels {
		if d.Int("content") != 1 {
			t.Errorf("merge-on-read %s: a delete file of content %d, want 1 (position deletes; never equality deletes): %v", name, d.Int("content"), d)
		}
		if f := d.Str("file_format"); (v == 3) != (f == "PUFFIN") {
			t.Errorf("merge-on-read v%d %s: a delete file in %s (v3: deletion vectors in PUFFIN; v2: position deletes in Parquet)", v, name, f)
		}
	}
}
