//go:build interop

package interop

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// lineageOf reads (_row_id, _last_updated_sequence_number) of every row of
// Spark table name, by id, and fails on a null or a _row_id two rows share.
func lineageOf(t *testing.T, e *Engines, name string) map[int64][2]int64 {
	t.Helper()
	out := map[int64][2]int64{}
	owner := map[int64]int64{}
	for _, r := range e.SparkSQL(t, "SELECT id, _row_id AS r, _last_updated_sequence_number AS s FROM "+name) {
		if r["r"] == "null" || r["s"] == "null" {
			t.Fatalf("row %v: null lineage", r)
		}
		id, rid := r.Int("id"), r.Int("r")
		if o, dup := owner[rid]; dup {
			t.Errorf("rows %d and %d share _row_id %d", o, id, rid)
		}
		owner[rid] = id
		out[id] = [2]int64{rid, r.Int("s")}
	}
	return out
}

// TestSparkWrittenV3RowLineage: Spark creates a format v3 table and
// inserts; icerun replaces partitions (ReplacePartition,
// ReplacePartitions); Spark then reads _row_id and
// _last_updated_sequence_number: rows of partitions icerun did not replace
// keep both, new rows get ids in [first-row-id, next-row-id) of icerun's
// snapshot and its sequence number, and no two rows share an id. Spark's
// own UPDATE (a row keeps its _row_id) and INSERT (ids from icerun's
// next-row-id on) continue the lineage, rewrite_data_files keeps every
// row's lineage, and icerun replaces a partition again. Spark and
// PyIceberg read exactly the expected rows throughout.
func TestSparkWrittenV3RowLineage(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		ctx := context.Background()
		name := createEvents(t, e, c, 3)
		e.SparkSQL(t, fmt.Sprintf("INSERT INTO %s SELECT id, %s, concat('v', id) FROM range(0, 60)", name, eventTS("id % 3")))
		m := eventModel{}
		for id := int64(0); id < 60; id++ {
			m.put(eventAt(id, int(id%3), "v"+strconv.FormatInt(id, 10)))
		}
		before := lineageOf(t, e, name)
		if len(before) != 60 {
			t.Fatalf("lineage of %d rows, want 60", len(before))
		}
		w := open(t, c, "events")

		// replaced checks the lineage after icerun's snapshot replaced the
		// partitions keys with the rows added.
		replaced := func(what string, keys []string, added []sparkEvent) {
			t.Helper()
			tbl := c.Load(t, "events")
			s := tbl.CurrentSnapshot()
			if s.FirstRowID == nil || s.AddedRows == nil {
				t.Fatalf("%s: snapshot %d has no first-row-id/added-rows", what, s.SnapshotID)
			}
			first, next := *s.FirstRowID, tbl.Metadata().NextRowID()
			if first+*s.AddedRows != next {
				t.Errorf("%s: first-row-id %d + added-rows %d != next-row-id %d", what, first, *s.AddedRows, next)
			}
			m.replace(keys, added...)
			checkEvents(t, e, c, m, what)
			after := lineageOf(t, e, name)
			isNew := map[int64]bool{}
			for _, ev := range added {
				isNew[ev.ID] = true
			}
			for id, got := range after {
				switch {
				case isNew[id]:
					if got[0] < first || got[0] >= next || got[1] != s.SequenceNumber {
						t.Errorf("%s: new row %d: (_row_id, seq) = %v, want id in [%d, %d) and seq %d", what, id, got, first, next, s.SequenceNumber)
					}
				case got != before[id]:
					t.Errorf("%s: untouched row %d: (_row_id, seq) = %v, was %v", what, id, got, before[id])
				}
			}
			before = after
		}

		k0 := eventAt(0, 0, "").key()
		in0 := []sparkEvent{}
		for _, id := range idsIn(bucket8(0), 1000, 3) {
			in0 = append(in0, eventAt(id, 0, "icerun-"+strconv.FormatInt(id, 10)))
		}
		key, err := w.Key(k0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ReplacePartition(ctx, key, eventReader(t, in0...)); err != nil {
			t.Fatal(err)
		}
		replaced("after icerun's ReplacePartition", []string{k0}, in0)

		in12 := []sparkEvent{eventAt(2001, 1, "icerun-2001"), eventAt(2002, 2, "icerun-2002")}
		if _, err := w.ReplacePartitions(ctx, eventReader(t, in12...)); err != nil {
			t.Fatal(err)
		}
		replaced("after icerun's ReplacePartitions", []string{in12[0].key(), in12[1].key()}, in12)

		// Spark continues the lineage on icerun's metadata
		next := c.Load(t, "events").Metadata().NextRowID()
		var upd int64 = -1
		for _, ev := range m.where(func(ev sparkEvent) bool { return ev.ID < 60 }) {
			upd = ev.ID
			break
		}
		e.SparkSQL(t, fmt.Sprintf("UPDATE %s SET data = 'spark-updated' WHERE id = %d", name, upd))
		e.SparkSQL(t, fmt.Sprintf("INSERT INTO %s SELECT id, %s, concat('s', id) FROM range(300, 304)", name, eventTS("id % 3")))
		ev := m[upd]
		ev.Data = "spark-updated"
		m.put(ev)
		for id := int64(300); id < 304; id++ {
			m.put(eventAt(id, int(id%3), "s"+strconv.FormatInt(id, 10)))
		}
		checkEvents(t, e, c, m, "after Spark's UPDATE and INSERT")
		after := lineageOf(t, e, name)
		if after[upd][0] != before[upd][0] || after[upd][1] <= before[upd][1] {
			t.Errorf("row %d updated by Spark: (_row_id, seq) = %v, was %v: want the same id, a later seq", upd, after[upd], before[upd])
		}
		for id := int64(300); id < 304; id++ {
			if after[id][0] < next {
				t.Errorf("row %d inserted by Spark: _row_id %d below icerun's next-row-id %d", id, after[id][0], next)
			}
		}
		before = after

		e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.rewrite_data_files(table => '%s', options => map('rewrite-all', 'true'))", c.Name, c.Py("events")))
		checkEvents(t, e, c, m, "after Spark's rewrite_data_files")
		after = lineageOf(t, e, name)
		for id, got := range after {
			if got != before[id] {
				t.Errorf("after rewrite_data_files: row %d: (_row_id, seq) = %v, was %v", id, got, before[id])
			}
		}
		before = after

		// icerun again, on the partition Spark updated, then rewrote
		ku := m[upd].key()
		b := bucket8(upd)
		inu := []sparkEvent{}
		for _, id := range idsIn(b, 6000, 2) {
			inu = append(inu, eventAt(id, int((m[upd].TS-eventDay0)/dayMicros), "icerun-"+strconv.FormatInt(id, 10)))
		}
		key, err = w.Key(ku)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ReplacePartition(ctx, key, eventReader(t, inu...)); err != nil {
			t.Fatal(err)
		}
		replaced("after icerun's replace of a partition Spark updated and rewrote", []string{ku}, inu)
		checkTotals(t, c.Load(t, "events"))
	})
}
