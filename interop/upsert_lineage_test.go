//go:build interop

package interop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/table"
)

// TestUpsertRowLineage: on two identical format v3 tables (same
// rows, same row ids), icerun upserts into one and Spark runs the same
// change as a MERGE INTO (Java's row lineage) into the other, both
// merge-on-read, then both copy-on-write. Spark then reads _row_id and
// _last_updated_sequence_number of both: every updated row keeps its id
// and gets the change's sequence number, untouched rows keep both, new
// rows get ids of the change's range (first-row-id to next-row-id), and
// every row but the new ones has exactly the lineage Java gave it on the
// twin. Then, merge-on-read, icerun's Compact and Spark's
// rewrite_data_files each change no row's lineage, and a second upsert
// after the compaction keeps the ids again (read from the compacted
// file's _row_id column).
func TestUpsertRowLineage(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		for _, mode := range []string{table.ModeMergeOnRead, table.ModeCopyOnWrite} {
			t.Run(mode, func(t *testing.T) { runRowLineage(t, e, c, mode) })
		}
	})
}

func runRowLineage(t *testing.T, e *Engines, c *Catalog, mode string) {
	ctx := context.Background()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "data", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	props := iceberg.Properties{"format-version": "3", table.PropertyUpsertMode: mode,
		"write.merge.mode": mode, "write.update.mode": mode, "write.delete.mode": mode}
	iceName, sparkName := "lin_icerun_"+mode[:3], "lin_spark_"+mode[:3]
	m := map[int64]morRow{}
	put := func(from, to int64, region, data string) []int64 {
		ids := morIDs(from, to)
		for _, id := range ids {
			m[id] = morRow{region, fmt.Sprintf("%s%d", data, id)}
		}
		return ids
	}
	eu, us := put(0, 40, "eu", "a"), put(100, 120, "us", "a")
	for _, name := range []string{iceName, sparkName} {
		c.CreateTable(t, name, sch, spec, props)
		if _, err := open(t, c, name).ReplacePartitions(ctx, reader(t, morBatch(m, eu), morBatch(m, us))); err != nil {
			t.Fatalf("replace %s: %v", name, err)
		}
	}
	ice, spark := c.Spark(iceName), c.Spark(sparkName)
	check := func(step, name string) {
		t.Helper()
		want := RowsOf(morBatch(m, slices.Sorted(maps.Keys(m))))
		SameRows(t, step+": spark full scan of "+name, want, e.SparkSQL(t, "SELECT * FROM "+c.Spark(name)))
	}
	before := lineageOf(t, e, ice)
	if twin := lineageOf(t, e, spark); !maps.Equal(before, twin) {
		t.Fatalf("the twin tables start with different lineage: %v, %v", before, twin)
	}

	// upsert checks the lineage of table name after a change of ids
	// (rows new when not in before) and returns it.
	upsert := func(step, name string, before map[int64][2]int64, ids []int64) map[int64][2]int64 {
		t.Helper()
		tbl := c.Load(t, name)
		s := tbl.CurrentSnapshot()
		first, next := *s.FirstRowID, tbl.Metadata().NextRowID()
		after := lineageOf(t, e, c.Spark(name))
		changed := map[int64]bool{}
		for _, id := range ids {
			changed[id] = true
			got, old := after[id], before[id]
			if _, ok := before[id]; ok {
				if got != [2]int64{old[0], s.SequenceNumber} {
					t.Errorf("%s: %s: updated row %d: (_row_id, seq) = %v, want (%d, %d): its id, the change's sequence number", step, name, id, got, old[0], s.SequenceNumber)
				}
			} else if got[0] < first || got[0] >= next || got[1] != s.SequenceNumber {
				t.Errorf("%s: %s: new row %d: (_row_id, seq) = %v, want an id in [%d, %d), seq %d", step, name, id, got, first, next, s.SequenceNumber)
			}
		}
		for id, old := range before {
			if !changed[id] && after[id] != old {
				t.Errorf("%s: %s: untouched row %d: (_row_id, seq) = %v, was %v", step, name, id, after[id], old)
			}
		}
		return after
	}
	// sameAsJava compares icerun's lineage with Java's on the twin,
	// but for the new rows: their ids follow each engine's file layout.
	sameAsJava := func(step string, iceL, sparkL map[int64][2]int64, isNew func(int64) bool) {
		t.Helper()
		for id, got := range iceL {
			if want := sparkL[id]; !isNew(id) && got != want {
				t.Errorf("%s: row %d: icerun's (_row_id, seq) = %v, Java's MERGE INTO gives %v", step, id, got, want)
			}
		}
	}

	up := put(30, 50, "eu", "u") // 10 updated, 10 new
	w := open(t, c, iceName)
	if _, err := w.Upsert(ctx, reader(t, morBatch(m, up)), "id"); err != nil {
		t.Fatal(err)
	}
	e.SparkSQL(t, fmt.Sprintf("MERGE INTO %s t USING (SELECT * FROM VALUES %s AS s(id, region, data)) s ON t.id = s.id "+
		"WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *", spark, sqlValues(m, up)))
	check("upsert", iceName)
	check("merge", sparkName)
	if dvs := c.Load(t, sparkName).CurrentSnapshot().Summary.Properties["added-dvs"]; (dvs != "") != (mode == table.ModeMergeOnRead) {
		t.Errorf("Spark's MERGE INTO (%s) wrote deletion vectors %q", mode, dvs)
	}
	iceL := upsert("icerun upsert", iceName, before, up)
	sparkL := upsert("spark merge", sparkName, before, up)
	sameAsJava("after the upsert", iceL, sparkL, func(id int64) bool { _, ok := before[id]; return !ok })

	if mode == table.ModeCopyOnWrite {
		return // nothing to compact
	}
	k, err := w.Key("region=eu")
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Compact(ctx, k)
	if err != nil || res.Unchanged {
		t.Fatalf("Compact(region=eu) = %+v, %v: want a snapshot", res, err)
	}
	e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.rewrite_data_files(table => '%s', options => map('rewrite-all', 'true'))", c.Name, c.Py(sparkName)))
	check("compact", iceName)
	check("rewrite_data_files", sparkName)
	for name, was := range map[string]map[int64][2]int64{ice: iceL, spark: sparkL} {
		if got := lineageOf(t, e, name); !maps.Equal(got, was) {
			t.Errorf("%s after compaction: lineage changed:\n got %v\nwant %v", name, got, was)
		}
	}

	// Again after the compaction: ids now come from the _row_id column
	// the compaction wrote.
	up = put(20, 35, "eu", "x")
	if _, err := w.Upsert(ctx, reader(t, morBatch(m, up)), "id"); err != nil {
		t.Fatal(err)
	}
	check("upsert after compaction", iceName)
	upsert("icerun upsert after compaction", iceName, iceL, up)
}

// sqlValues are the rows ids of m as a Spark VALUES list.
func sqlValues(m map[int64]morRow, ids []int64) string {
	vals := make([]string, len(ids))
	for i, id := range ids {
		vals[i] = fmt.Sprintf("(CAST(%d AS BIGINT), '%s', '%s')", id, m[id].region, m[id].data)
	}
	return strings.Join(vals, ", ")
}
