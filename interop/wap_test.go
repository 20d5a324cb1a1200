//go:build interop

package interop

import (
	"context"
	"fmt"
	"testing"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// TestWriteAuditPublish: icerun writes partition eu to branch audit;
// Spark reads the branch (VERSION AS OF 'audit') and main, PyIceberg the
// branch's snapshot; main moves on another partition; after the publish
// (re-planned on main) both engines read the branch's eu and main's us.
func TestWriteAuditPublish(t *testing.T) {
	e := Get(t)
	e.EachTarget(t, func(t *testing.T, c *Catalog) {
		ctx := context.Background()
		rows := regionTable(t, c, "wap")
		mw := open(t, c, "wap")
		bw := open(t, c, "wap", table.WithBranch("audit"))
		eu, us, eu2, us2 := rows("eu", 0, 3), rows("us", 100, 2), rows("eu", 200, 4), rows("us", 300, 5)
		if _, err := mw.ReplacePartitions(ctx, reader(t, eu, us)); err != nil {
			t.Fatal(err)
		}
		key, err := bw.Key("region=eu")
		if err != nil {
			t.Fatal(err)
		}
		res, err := bw.ReplacePartition(ctx, key, reader(t, eu2))
		if err != nil {
			t.Fatal(err)
		}
		name := c.Spark("wap")
		got := e.Batch(t, []Request{
			SparkSQL(fmt.Sprintf("SELECT * FROM %s VERSION AS OF 'audit'", name)),
			SparkSQL("SELECT * FROM " + name),
			PyIcebergScan(c.Name, c.Py("wap"), Scan{SnapshotID: res.SnapshotID}),
			SparkSQL(fmt.Sprintf("SELECT * FROM %s VERSION AS OF 'audit' WHERE region = 'eu'", name)),
		})
		SameRows(t, "spark branch", RowsOf(eu2, us), got[0].Named())
		SameRows(t, "spark main before publish", RowsOf(eu, us), got[1].Named())
		SameRows(t, "pyiceberg branch snapshot", RowsOf(eu2, us), got[2].Named())
		SameRows(t, "spark branch region=eu", RowsOf(eu2), got[3].Named())

		usKey, err := mw.Key("region=us")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mw.ReplacePartition(ctx, usKey, reader(t, us2)); err != nil { // main moves
			t.Fatal(err)
		}
		pub, err := mw.Publish(ctx, "audit")
		if err != nil {
			t.Fatal(err)
		}
		if pub.AddedFiles == 0 {
			t.Fatalf("Publish on a moved main = %+v, want a re-planned snapshot", pub)
		}
		got = e.Batch(t, []Request{
			SparkSQL("SELECT * FROM " + name),
			PyIcebergScan(c.Name, c.Py("wap"), Scan{}),
			SparkSQL(fmt.Sprintf("SELECT * FROM %s VERSION AS OF 'audit'", name)),
			SparkSQL(fmt.Sprintf("SELECT summary['%s'] AS b FROM %s.snapshots WHERE snapshot_id = %d", commit.SummaryPublishedBranch, name, pub.SnapshotID)),
		})
		SameRows(t, "spark main after publish", RowsOf(eu2, us2), got[0].Named())
		SameRows(t, "pyiceberg main after publish", RowsOf(eu2, us2), got[1].Named())
		SameRows(t, "spark branch after publish", RowsOf(eu2, us), got[2].Named())
		SameRows(t, "spark: the publish snapshot's summary names the branch", []Row{{"b": "s:audit"}}, got[3].Named())
	})
}
