//go:build interop

package interop

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// morRow is a row of the merge-on-read table: id, region, data.
type morRow struct {
	region, data string
}

var morFields = []arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true},
}

// morBatch is the rows of m with ids ids.
func morBatch(m map[int64]morRow, ids []int64) arrow.RecordBatch {
	return batch(morFields, len(ids), func(b *array.RecordBuilder, i int) {
		r := m[ids[i]]
		b.Field(0).(*array.Int64Builder).Append(ids[i])
		b.Field(1).(*array.StringBuilder).Append(r.region)
		b.Field(2).(*array.StringBuilder).Append(r.data)
	})
}

// morIDs are the ids from..to-1.
func morIDs(from, to int64) []int64 {
	var out []int64
	for id := from; id < to; id++ {
		out = append(out, id)
	}
	return out
}

// TestMergeOnRead: icerun upserts and deletes merge-on-read (position
// deletes on v2, deletion vectors on v3) and compacts; Spark and
// PyIceberg read every step with the deletes applied; Spark's
// rewrite_data_files and expire_snapshots run after icerun's deletes, and
// icerun's upserts go on after them.
func TestMergeOnRead(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { runMergeOnRead(t, e, c, v) })
		}
	})
}

func runMergeOnRead(t *testing.T, e *Engines, c *Catalog, v int) {
	ctx := context.Background()
	name := fmt.Sprintf("mor_v%d", v)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "data", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	c.CreateTable(t, name, sch, spec, iceberg.Properties{"format-version": fmt.Sprint(v), table.PropertyUpsertMode: table.ModeMergeOnRead})
	w := open(t, c, name)
	m := map[int64]morRow{}
	put := func(from, to int64, region, data string) []int64 {
		ids := morIDs(from, to)
		for _, id := range ids {
			m[id] = morRow{region, fmt.Sprintf("%s%d", data, id)}
		}
		return ids
	}
	key := func(s string) partition.Key {
		k, err := w.Key(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	check := func(step string) {
		t.Helper()
		want := RowsOf(morBatch(m, slices.Sorted(maps.Keys(m))))
		res := e.Batch(t, []Request{
			SparkSQL("SELECT * FROM " + c.Spark(name)),
			PyIcebergScan(c.Name, c.Py(name), Scan{}),
		})
		SameRows(t, step+": spark full scan", want, res[0].Named())
		SameRows(t, step+": pyiceberg full scan", want, res[1].Named())
	}
	must := func(step string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	eu, us := put(0, 40, "eu", "a"), put(100, 120, "us", "a")
	_, err := w.ReplacePartitions(ctx, reader(t, morBatch(m, eu), morBatch(m, us)))
	must("replace", err)
	up := put(30, 50, "eu", "u")
	_, err = w.Upsert(ctx, reader(t, morBatch(m, up)), "id")
	must("upsert", err)
	gone := morIDs(0, 5)
	_, err = w.Delete(ctx, key("region=eu"), reader(t, morBatch(m, gone)), "id")
	must("delete", err)
	for _, id := range gone {
		delete(m, id)
	}
	_, err = w.DeleteWhere(ctx, key("region=us"), iceberg.GreaterThanEqual(iceberg.Reference("id"), int64(115)))
	must("delete where", err)
	for id := int64(115); id < 120; id++ {
		delete(m, id)
	}
	check("upsert and deletes")

	e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.rewrite_data_files(table => '%s', options => map('rewrite-all', 'true'))", c.Name, c.Py(name)))
	e.SparkSQL(t, fmt.Sprintf("CALL `%s`.system.expire_snapshots(table => '%s', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)", c.Name, c.Py(name)))
	check("spark rewrite_data_files and expire_snapshots")

	up = put(45, 60, "eu", "v")
	_, err = w.Upsert(ctx, reader(t, morBatch(m, up)), "id")
	must("upsert after spark's rewrite", err)
	_, err = w.Delete(ctx, key("region=eu"), reader(t, morBatch(m, morIDs(10, 12))), "id")
	must("delete after spark's rewrite", err)
	delete(m, 10)
	delete(m, 11)
	check("icerun after spark's rewrite")

	// Spark's appends add a manifest each; icerun folds them with the
	// others (Spark's rewrite_manifests) and Spark reads the same rows.
	for _, id := range []int64{900, 901} {
		e.SparkSQL(t, fmt.Sprintf("INSERT INTO %s VALUES (%d, 'us', 's%d')", c.Spark(name), id, id))
		m[id] = morRow{"us", fmt.Sprintf("s%d", id)}
	}
	rm, err := w.RewriteManifests(ctx)
	must("rewrite manifests", err)
	if rm.Unchanged {
		t.Errorf("RewriteManifests after Spark's appends: Unchanged")
	}
	check("rewrite manifests")

	res, err := w.Compact(ctx, key("region=eu"))
	must("compact", err)
	if res.Unchanged {
		t.Errorf("Compact(region=eu with deletes).Unchanged = true")
	}
	check("compact")
}

// TestMergeOnReadOverSparkDeletes: Spark writes a table with
// merge-on-read DELETE, UPDATE and MERGE (position deletes on v2,
// deletion vectors on v3); icerun then upserts and deletes merge-on-read
// in a partition that holds Spark's delete files, merging Spark's vectors
// into its own on v3. Spark and PyIceberg read the expected rows.
func TestMergeOnReadOverSparkDeletes(t *testing.T) {
	e := Get(t)
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			e.EachTarget(t, func(t *testing.T, c *Catalog) {
				ctx := context.Background()
				m := eventModel{}
				name := sparkWrites(t, e, c, v, m)
				withDeletes := deleteFileKeys(t, e, name)
				if len(withDeletes) == 0 {
					t.Fatal("Spark left no delete files")
				}
				var k string
				var in []sparkEvent
				for _, dk := range withDeletes { // a partition with delete files and 2 rows or more
					if in = m.where(func(ev sparkEvent) bool { return ev.key() == dk }); len(in) >= 2 {
						k = dk
						break
					}
				}
				if k == "" {
					t.Fatalf("no partition with delete files holds 2 rows or more (%s)", keyList(withDeletes))
				}
				w := open(t, c, "events", table.WithWriteMode(table.MergeOnRead))
				changed := in[0]
				changed.Data = "icerun-mor"
				if _, err := w.Upsert(ctx, eventReader(t, changed), "id"); err != nil {
					t.Fatal(err)
				}
				m.put(changed)
				checkEvents(t, e, c, m, "after icerun's merge-on-read upsert over Spark's deletes")
				key, err := w.Key(k)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Delete(ctx, key, eventReader(t, in[1]), "id"); err != nil {
					t.Fatal(err)
				}
				delete(m, in[1].ID)
				checkEvents(t, e, c, m, "after icerun's merge-on-read delete over Spark's deletes")
				if v == 3 {
					per := e.SparkSQL(t, "SELECT referenced_data_file AS f, COUNT(*) AS n FROM "+name+".delete_files GROUP BY referenced_data_file HAVING COUNT(*) > 1")
					if len(per) > 0 {
						t.Errorf("data files with more than one deletion vector: %v", per)
					}
				}
			})
		})
	}
}
