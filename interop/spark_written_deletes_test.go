//go:build interop

package interop

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// sparkWrites has Spark write events on format v: INSERT, a dynamic INSERT
// OVERWRITE, and merge-on-read DELETE, UPDATE and MERGE INTO, which leave
// position delete files (v2) or deletion vectors (v3). m follows.
func sparkWrites(t *testing.T, e *Engines, c *Catalog, v int, m eventModel) string {
	t.Helper()
	name := createEvents(t, e, c, v)
	e.SparkSQL(t, fmt.Sprintf("INSERT INTO %s SELECT id, %s, concat('v', id) FROM range(0, 60)", name, eventTS("id % 3")))
	for id := int64(0); id < 60; id++ {
		m.put(eventAt(id, int(id%3), "v"+strconv.FormatInt(id, 10)))
	}
	// dynamic overwrite: the partitions of the new rows only
	e.Batch(t, []Request{
		SparkSQL("SET spark.sql.sources.partitionOverwriteMode=dynamic"),
		SparkSQL(fmt.Sprintf("INSERT OVERWRITE %s SELECT id, %s, concat('o', id) FROM range(200, 206)", name, eventTS("2"))),
		SparkSQL("RESET spark.sql.sources.partitionOverwriteMode"),
	})
	var over []sparkEvent
	for id := int64(200); id < 206; id++ {
		over = append(over, eventAt(id, 2, "o"+strconv.FormatInt(id, 10)))
	}
	m.overwrite(over...)

	e.SparkSQL(t, "DELETE FROM "+name+" WHERE id % 5 = 0")
	for id := range m {
		if id%5 == 0 {
			delete(m, id)
		}
	}
	e.SparkSQL(t, "UPDATE "+name+" SET data = concat(data, '-u') WHERE id % 7 = 1")
	for id, ev := range m {
		if id%7 == 1 {
			ev.Data += "-u"
			m[id] = ev
		}
	}
	e.SparkSQL(t, fmt.Sprintf(`MERGE INTO %s x USING (SELECT id, %s AS ts, concat('m', id) AS data FROM range(50, 70)) s
		ON x.id = s.id
		WHEN MATCHED AND x.id %% 2 = 0 THEN DELETE
		WHEN MATCHED THEN UPDATE SET x.data = s.data
		WHEN NOT MATCHED THEN INSERT *`, name, eventTS("id % 3")))
	for id := int64(50); id < 70; id++ {
		ev, ok := m[id]
		switch {
		case ok && id%2 == 0:
			delete(m, id)
		case ok:
			ev.Data = "m" + strconv.FormatInt(id, 10)
			m[id] = ev
		default:
			m.put(eventAt(id, int(id%3), "m"+strconv.FormatInt(id, 10)))
		}
	}
	return name
}

// TestSparkWrittenDeletes: Spark writes a table partitioned by days(ts)
// and bucket(8, id) with INSERT, INSERT OVERWRITE and merge-on-read
// DELETE, UPDATE and MERGE INTO (position deletes on v2, deletion vectors
// on v3); icerun then replaces partitions that hold delete files
// (ReplacePartition, ReplacePartitions, Upsert). Spark and PyIceberg read
// exactly the expected rows, full and filtered; the replaced partitions
// hold no delete file; Spark's rewrite_data_files and expire_snapshots run
// cleanly on the result, and icerun replaces a partition of the rewritten
// table.
func TestSparkWrittenDeletes(t *testing.T) {
	e := Get(t)
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			e.EachTarget(t, func(t *testing.T, c *Catalog) {
				ctx := context.Background()
				m := eventModel{}
				name := sparkWrites(t, e, c, v, m)
				checkEvents(t, e, c, m, "after Spark's writes")
				withDeletes := deleteFileKeys(t, e, name)
				if len(withDeletes) < 4 {
					t.Fatalf("Spark left delete files in %d partitions (%s), want at least 4", len(withDeletes), keyList(withDeletes))
				}
				formats := e.SparkSQL(t, "SELECT DISTINCT file_format AS f FROM "+name+".delete_files")
				wantFormat := map[int]string{2: "s:PARQUET", 3: "s:PUFFIN"}[v] // position deletes, deletion vectors
				if len(formats) != 1 || formats[0]["f"] != wantFormat {
					t.Fatalf("delete file formats %v, want %s", formats, wantFormat)
				}

				// Recompute copies a partition with delete files into events_copy:
				// the rows it reads are those Spark's deletes leave.
				copyName := c.Spark("events_copy")
				e.SparkSQL(t, "CREATE TABLE "+copyName+" USING iceberg PARTITIONED BY (days(ts), bucket(8, id)) TBLPROPERTIES ('format-version'='"+strconv.Itoa(v)+"') AS SELECT * FROM "+name+" WHERE false")
				cw := open(t, c, "events_copy")
				src := c.Load(t, "events")
				srcKey, err := partition.ParseKey(src.Spec(), src.Schema(), withDeletes[0])
				if err != nil {
					t.Fatal(err)
				}
				ckey, err := cw.Key(withDeletes[0])
				if err != nil {
					t.Fatal(err)
				}
				identity := func(_ context.Context, rows array.RecordReader) (array.RecordReader, error) {
					rows.Retain()
					return rows, nil
				}
				if _, err := cw.Recompute(ctx, ckey, table.Source{Table: src, Key: srcKey}, identity); err != nil {
					t.Fatal(err)
				}
				inPart := rows(m.where(func(ev sparkEvent) bool { return ev.key() == withDeletes[0] }))
				SameRows(t, "recomputed copy of "+withDeletes[0], inPart, e.SparkSQL(t, "SELECT id, ts, data FROM "+copyName))

				// Spark made the table merge-on-read (write.*.mode): the
				// upsert below is told to copy on write, so that every
				// partition icerun touches here is rewritten whole
				// (TestMergeOnReadOverSparkDeletes upserts merge-on-read).
				w := open(t, c, "events", table.WithWriteMode(table.CopyOnWrite))
				newIn := func(k string, from int64, n int) []sparkEvent {
					var b int
					var day string
					if _, err := fmt.Sscanf(strings.ReplaceAll(k, "/", " "), "ts_day=%s id_bucket=%d", &day, &b); err != nil {
						t.Fatalf("key %s: %v", k, err)
					}
					d := slices.Index([]string{"2026-07-14", "2026-07-15", "2026-07-16"}, day)
					var out []sparkEvent
					for _, id := range idsIn(int32(b), from, n) {
						out = append(out, eventAt(id, d, "icerun-"+strconv.FormatInt(id, 10)))
					}
					return out
				}

				// ReplacePartition of a partition with delete files
				k0 := withDeletes[0]
				in0 := newIn(k0, 1000, 3)
				key, err := w.Key(k0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.ReplacePartition(ctx, key, eventReader(t, in0...)); err != nil {
					t.Fatal(err)
				}
				m.replace([]string{k0}, in0...)

				// ReplacePartitions of two more
				in12 := append(newIn(withDeletes[1], 2000, 2), newIn(withDeletes[2], 3000, 2)...)
				if _, err := w.ReplacePartitions(ctx, eventReader(t, in12...)); err != nil {
					t.Fatal(err)
				}
				m.replace(withDeletes[1:3], in12...)
				checkEvents(t, e, c, m, "after icerun's replaces")

				// Upsert into a fourth: one of its rows changed, a deleted id back, a new id
				k3 := withDeletes[3]
				var up []sparkEvent
				for _, ev := range m.where(func(ev sparkEvent) bool { return ev.key() == k3 }) {
					ev.Data = "upserted"
					up = append(up, ev)
					break
				}
				up = append(up, newIn(k3, 4000, 1)...)
				if _, err := w.Upsert(ctx, eventReader(t, up...), "id"); err != nil {
					t.Fatal(err)
				}
				m.put(up...)
				checkEvents(t, e, c, m, "after icerun's upsert")

				left := deleteFileKeys(t, e, name)
				for _, k := range withDeletes[:4] {
					if slices.Contains(left, k) {
						t.Errorf("partition %s still has delete files after icerun replaced it (partitions with delete files: %s)", k, keyList(left))
					}
				}
				if len(left) != len(withDeletes)-4 {
					t.Errorf("partitions with delete files: %s, want those of %s but the first 4", keyList(left), keyList(withDeletes))
				}

				// Spark's maintenance on icerun's snapshots
				e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.rewrite_data_files(table => '%s', options => map('rewrite-all', 'true'))", c.Name, c.Py("events")))
				checkEvents(t, e, c, m, "after Spark's rewrite_data_files")
				e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.expire_snapshots(table => '%s', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)", c.Name, c.Py("events")))
				checkEvents(t, e, c, m, "after Spark's expire_snapshots")

				// icerun on top of Spark's rewrite
				k := m.keys()[0]
				in := newIn(k, 5000, 2)
				key, err = w.Key(k)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.ReplacePartition(ctx, key, eventReader(t, in...)); err != nil {
					t.Fatal(err)
				}
				m.replace([]string{k}, in...)
				checkEvents(t, e, c, m, "after icerun's replace of the rewritten table")
				checkTotals(t, c.Load(t, "events"))
			})
		})
	}
}

// checkTotals checks that the current snapshot's summary totals agree
// with its live files, read with iceberg-go.
func checkTotals(t *testing.T, tbl *icetable.Table) {
	t.Helper()
	ctx := context.Background()
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := tbl.CurrentSnapshot()
	mfs, err := s.Manifests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var dataFiles, records, deleteFiles int64
	for _, mf := range mfs {
		es, err := mf.FetchEntries(fsys, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if mf.ManifestContent() == iceberg.ManifestContentData {
				dataFiles, records = dataFiles+1, records+e.DataFile().Count()
			} else {
				deleteFiles++
			}
		}
	}
	for k, want := range map[string]int64{"total-data-files": dataFiles, "total-records": records, "total-delete-files": deleteFiles} {
		if got := s.Summary.Properties[k]; got != strconv.FormatInt(want, 10) {
			t.Errorf("snapshot %d: summary %s = %q, want %d", s.SnapshotID, k, got, want)
		}
	}
}
