package snapshotcommit_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// The tests of this file check the snapshots icerun writes itself
// (snapshot.go, snapshot_summary.go) through the public API: table.Writer
// on the embedded SQLite catalog, read back with iceberg-go.

var day0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

func day(i int) time.Time { return day0.AddDate(0, 0, i) }

// ordersTable creates db.<name> with the fact_orders schema and spec.
func ordersTable(t *testing.T, cat catalog.Catalog, name string, props iceberg.Properties) icetable.Identifier {
	t.Helper()
	return catalogtest.CreateTable(t, cat, name, orderdata.Schema, orderdata.Spec, props)
}

func openWriter(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *table.Writer {
	t.Helper()
	w, err := table.Open(context.Background(), cat, ident)
	require.NoError(t, err)
	return w
}

func dayKey(t *testing.T, w *table.Writer, d time.Time) partition.Key {
	t.Helper()
	k, err := w.Key("event_date=" + d.Format(time.DateOnly))
	require.NoError(t, err)
	return k
}

// replaceDay makes day d's partition hold exactly orders.
func replaceDay(t *testing.T, w *table.Writer, d time.Time, orders []orderdata.Order) commit.Result {
	t.Helper()
	rows := orderdata.Reader(orders, 256)
	defer rows.Release()
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, d), rows)
	require.NoError(t, err)
	return res
}

// replaceDays replaces the partitions orders fall into, in one snapshot.
func replaceDays(t *testing.T, w *table.Writer, orders []orderdata.Order) commit.Result {
	t.Helper()
	rows := orderdata.Reader(orders, 1024)
	defer rows.Release()
	res, err := w.ReplacePartitions(context.Background(), rows)
	require.NoError(t, err)
	return res
}

// days is n orders of each of the days.
func days(n int, ds ...time.Time) []orderdata.Order {
	var out []orderdata.Order
	for _, d := range ds {
		out = append(out, orderdata.Day(d, n)...)
	}
	return out
}

// repriced is orders with every amount set to amount: other content for
// the same keys.
func repriced(orders []orderdata.Order, amount int64) []orderdata.Order {
	out := append([]orderdata.Order(nil), orders...)
	for i := range out {
		out[i].Amount = amount
	}
	return out
}

var referenceTables atomic.Int64 // names the tables of expected

// expected is the canonical scan of a fresh table holding exactly orders,
// written by iceberg-go's own append: a reference that does not go through
// icerun's commit path.
func expected(t *testing.T, cat catalog.Catalog, orders []orderdata.Order) []byte {
	t.Helper()
	ctx := context.Background()
	ident := ordersTable(t, cat, fmt.Sprintf("expected_%d", referenceTables.Add(1)), nil)
	if len(orders) == 0 {
		return nil
	}
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	rows := orderdata.Reader(orders, 1024)
	defer rows.Release()
	txn := tbl.NewTransaction()
	require.NoError(t, txn.Append(ctx, rows, nil))
	_, err = txn.Commit(ctx)
	require.NoError(t, err)
	return catalogtest.CanonicalScan(t, cat, ident)
}

func load(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) *icetable.Table {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	return tbl
}

// manifests are the manifests of snapshot s of tbl.
func manifests(t *testing.T, tbl *icetable.Table, s *icetable.Snapshot) []iceberg.ManifestFile {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	mfs, err := s.Manifests(fsys)
	require.NoError(t, err)
	return mfs
}

// entries are the entries of mf, with the DELETED ones unless live.
func entries(t *testing.T, tbl *icetable.Table, mf iceberg.ManifestFile, live bool) []iceberg.ManifestEntry {
	t.Helper()
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	es, err := mf.FetchEntries(fsys, live)
	require.NoError(t, err)
	return es
}

// liveFiles are the live data-file entries of snapshot s, by path.
func liveFiles(t *testing.T, tbl *icetable.Table, s *icetable.Snapshot) map[string]iceberg.ManifestEntry {
	t.Helper()
	out := map[string]iceberg.ManifestEntry{}
	if s == nil {
		return out
	}
	for _, mf := range manifests(t, tbl, s) {
		if mf.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		for _, e := range entries(t, tbl, mf, true) {
			_, dup := out[e.DataFile().FilePath()]
			require.False(t, dup, "snapshot %d lists data file %s twice", s.SnapshotID, e.DataFile().FilePath())
			out[e.DataFile().FilePath()] = e
		}
	}
	return out
}

// history is main's snapshots, oldest first.
func history(t *testing.T, tbl *icetable.Table) []*icetable.Snapshot {
	t.Helper()
	var out []*icetable.Snapshot
	for s := tbl.CurrentSnapshot(); s != nil; {
		out = append([]*icetable.Snapshot{s}, out...)
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}

// TestSnapshotFormatVersions replaces, re-replaces and adds partitions on
// a v1 and a v2 table: the content equals the reference, v2 sequence
// numbers increase by one per commit, and every live data file keeps the
// data sequence number and snapshot id of the commit that added it, also
// after its manifest was rewritten or merged.
func TestSnapshotFormatVersions(t *testing.T) {
	for _, version := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", iceberg.Properties{icetable.PropertyFormatVersion: strconv.Itoa(version)})
			require.Equal(t, version, load(t, cat, ident).Metadata().Version(), "format version of the created table")
			w := openWriter(t, cat, ident)

			type added struct{ snap, seq int64 }
			addedBy := map[string]added{} // data file -> the commit that added it
			content := map[time.Time][]orderdata.Order{}
			step := func(name string, apply func() commit.Result) {
				t.Helper()
				before := load(t, cat, ident)
				res := apply()
				require.False(t, res.Unchanged, "%s: unchanged", name)
				after := load(t, cat, ident)
				snap := after.CurrentSnapshot()
				require.Equal(t, res.SnapshotID, snap.SnapshotID, "%s: current snapshot", name)
				wantSeq := int64(0)
				if version >= 2 {
					wantSeq = before.Metadata().LastSequenceNumber() + 1
				}
				assert.Equal(t, wantSeq, snap.SequenceNumber, "%s: SequenceNumber", name)
				assert.Equal(t, wantSeq, after.Metadata().LastSequenceNumber(), "%s: LastSequenceNumber", name)
				old := liveFiles(t, before, before.CurrentSnapshot())
				for path, e := range liveFiles(t, after, snap) {
					if _, ok := old[path]; !ok {
						assert.Equal(t, snap.SnapshotID, e.SnapshotID(), "%s: new file %s: SnapshotID", name, path)
						addedBy[path] = added{snap.SnapshotID, snap.SequenceNumber}
					}
				}
			}
			for i := 0; i < 3; i++ {
				content[day(i)] = orderdata.Day(day(i), 20+i)
			}
			step("replace day0", func() commit.Result { return replaceDay(t, w, day(0), content[day(0)]) })
			content[day(0)] = repriced(orderdata.Day(day(0), 30), 7)
			step("replace day0 again", func() commit.Result { return replaceDay(t, w, day(0), content[day(0)]) })
			step("add day1, day2", func() commit.Result { return replaceDays(t, w, append(content[day(1)], content[day(2)]...)) })
			content[day(1)] = repriced(content[day(1)], 8)
			// rewrites the manifest of day1 and day2: day2's entry becomes EXISTING
			step("replace day1", func() commit.Result { return replaceDay(t, w, day(1), content[day(1)]) })
			for i := 3; i < 3+snapshotcommit.MergeSmallManifests; i++ { // enough small manifests to merge them
				content[day(i)] = orderdata.Day(day(i), 5)
				step(fmt.Sprintf("add day%d", i), func() commit.Result { return replaceDay(t, w, day(i), content[day(i)]) })
			}

			assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "canonical scan")

			tbl := load(t, cat, ident)
			live := liveFiles(t, tbl, tbl.CurrentSnapshot())
			require.Len(t, live, len(content), "one live file per partition")
			for path, e := range live {
				a, ok := addedBy[path]
				require.True(t, ok, "live file %s was added by no commit", path)
				assert.Equal(t, a.snap, e.SnapshotID(), "SnapshotID() of %s", path)
				if version >= 2 {
					assert.Equal(t, a.seq, e.SequenceNum(), "SequenceNum() of %s", path)
				}
			}
		})
	}
}

// summaryInt is property k of s's summary, 0 when absent.
func summaryInt(t *testing.T, s *icetable.Snapshot, k string) int64 {
	t.Helper()
	v, ok := s.Summary.Properties[k]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, "summary %s of snapshot %d", k, s.SnapshotID)
	return n
}

// checkSummaries checks the standard summary of every snapshot of main
// written by icerun against its manifests: added and deleted counts
// against the difference to the parent's live files, the totals against
// its own live files, the operation against what it deleted.
func checkSummaries(t *testing.T, tbl *icetable.Table) {
	t.Helper()
	var parent map[string]iceberg.ManifestEntry
	var parentDeletes map[string]int64
	var foreign *icetable.Snapshot // the parent, once a snapshot not icerun's came
	for _, s := range history(t, tbl) {
		live := liveFiles(t, tbl, s)
		if _, ok := s.Summary.Properties[commit.SummaryCommitToken]; !ok {
			parent, parentDeletes, foreign = live, deleteSizes(t, tbl, s), s // not icerun's
			continue
		}
		var addFiles, addRecs, addSize, delFiles, delRecs, delSize int64
		for path, e := range live {
			if _, ok := parent[path]; !ok {
				addFiles, addRecs, addSize = addFiles+1, addRecs+e.DataFile().Count(), addSize+e.DataFile().FileSizeBytes()
			}
		}
		for path, e := range parent {
			if _, ok := live[path]; !ok {
				delFiles, delRecs, delSize = delFiles+1, delRecs+e.DataFile().Count(), delSize+e.DataFile().FileSizeBytes()
			}
		}
		var files, recs, size int64
		for _, e := range live {
			files, recs, size = files+1, recs+e.DataFile().Count(), size+e.DataFile().FileSizeBytes()
		}
		// delete files count in the sizes, as in Java's summaries
		deletes := deleteSizes(t, tbl, s)
		for id, n := range deletes {
			size += n
			if _, ok := parentDeletes[id]; !ok {
				addSize += n
			}
		}
		for id, n := range parentDeletes {
			if _, ok := deletes[id]; !ok {
				delSize += n
			}
		}
		id := s.SnapshotID
		for k, want := range map[string]int64{
			"added-data-files": addFiles, "added-records": addRecs, "added-files-size": addSize,
			"deleted-data-files": delFiles, "deleted-records": delRecs, "removed-files-size": delSize,
		} {
			assert.Equal(t, want, summaryInt(t, s, k), "snapshot %d: summary %s", id, k)
			_, ok := s.Summary.Properties[k]
			assert.Equal(t, want > 0, ok, "snapshot %d: summary %s is set when it is not 0, as Java sets it", id, k)
		}
		var created, kept int64
		for _, mf := range manifests(t, tbl, s) {
			if mf.SnapshotID() == id {
				created++
			} else {
				kept++
			}
		}
		assert.Equal(t, created, summaryInt(t, s, "manifests-created"), "snapshot %d: manifests-created", id)
		assert.Equal(t, kept, summaryInt(t, s, "manifests-kept"), "snapshot %d: manifests-kept", id)
		for _, k := range []string{"changed-partition-count", "manifests-replaced"} {
			_, ok := s.Summary.Properties[k]
			assert.True(t, ok, "snapshot %d: summary has no %s", id, k)
		}
		if foreign != nil {
			// Another writer's snapshot came first: its total-files-size
			// may count a deletion vector's Puffin file, not its blob
			// (iceberg-go's RowDelta does), so only the difference holds.
			size = summaryInt(t, foreign, "total-files-size") + addSize - delSize
		}
		for k, want := range map[string]int64{"total-data-files": files, "total-records": recs, "total-files-size": size} {
			got, ok := s.Summary.Properties[k]
			assert.True(t, ok, "snapshot %d: summary has no %s", id, k)
			assert.Equal(t, strconv.FormatInt(want, 10), got, "snapshot %d: summary %s", id, k)
		}
		wantOp := icetable.OpAppend // Iceberg's operations: only adds, adds and deletes, only deletes
		switch {
		case s.Summary.Properties["replace-partitions"] == "true": // Java's ReplacePartitions
			wantOp = icetable.OpOverwrite
		case delFiles > 0 && addFiles > 0:
			wantOp = icetable.OpOverwrite
		case delFiles > 0:
			wantOp = icetable.OpDelete
		}
		assert.Equal(t, wantOp, s.Summary.Operation, "snapshot %d: operation", id)
		parent, parentDeletes = live, deletes
		if foreign != nil {
			foreign = s
		}
	}
}

// deleteSizes are the sizes of the live delete files of snapshot s, by
// path (and blob offset for a deletion vector, whose size is its blob's).
func deleteSizes(t *testing.T, tbl *icetable.Table, s *icetable.Snapshot) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, mf := range manifests(t, tbl, s) {
		if mf.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		for _, e := range entries(t, tbl, mf, true) {
			f, id, n := e.DataFile(), e.DataFile().FilePath(), e.DataFile().FileSizeBytes()
			if icetable.IsDeletionVector(f) {
				id += "#" + strconv.FormatInt(*f.ContentOffset(), 10)
				n = *f.ContentSizeInBytes()
			}
			out[id] = n
		}
	}
	return out
}

// TestSnapshotSummaryTotals runs appends of new partitions, replacements
// that delete files, an upsert, an unchanged rerun and an emptied
// partition, and checks every snapshot's summary against its manifests.
func TestSnapshotSummaryTotals(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)

	replaceDays(t, w, days(40, day(0), day(1), day(2)))                     // append, 3 files
	replaceDay(t, w, day(1), repriced(orderdata.Day(day(1), 25), 3))        // overwrite, 1 for 1
	replaceDay(t, w, day(3), orderdata.Day(day(3), 10))                     // append
	replaceDays(t, w, append(days(12, day(2)), days(8, day(4), day(5))...)) // overwrite day2, add day4, day5
	n := catalogtest.Snapshots(t, cat, ident)
	res := replaceDay(t, w, day(3), orderdata.Day(day(3), 10))
	assert.True(t, res.Unchanged, "rerun of day3: Unchanged")
	assert.Equal(t, n, catalogtest.Snapshots(t, cat, ident), "snapshots after an unchanged rerun")
	up := orderdata.Reader(append(repriced(orderdata.Day(day(4), 3), 99), orderdata.At(day(4), 50, 60)), 64)
	_, err := w.Upsert(ctx, up, "order_id") // rewrites day4
	up.Release()
	require.NoError(t, err)
	replaceDay(t, w, day(0), nil) // empties day0: deletes only

	tbl := load(t, cat, ident)
	require.Len(t, history(t, tbl), 6, "snapshots of main")
	checkSummaries(t, tbl)
	cur := tbl.CurrentSnapshot()
	assert.Equal(t, int64(0), summaryInt(t, cur, "added-data-files"), "emptying day0: added-data-files")
	assert.Equal(t, int64(40), summaryInt(t, cur, "deleted-records"), "emptying day0: deleted-records")
	assert.Equal(t, "0", cur.Summary.Properties["total-delete-files"], "total-delete-files")
}

// TestSnapshotTombstones: the snapshot that replaces a partition lists the
// old file as DELETED with its own snapshot id and the file's data
// sequence number; no later snapshot keeps a manifest of tombstones only.
func TestSnapshotTombstones(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)

	first := replaceDay(t, w, day(0), orderdata.Day(day(0), 10))
	tbl := load(t, cat, ident)
	old := liveFiles(t, tbl, tbl.CurrentSnapshot())
	require.Len(t, old, 1)
	second := replaceDay(t, w, day(0), repriced(orderdata.Day(day(0), 10), 1))
	replaceDay(t, w, day(1), orderdata.Day(day(1), 10))
	replaceDay(t, w, day(2), orderdata.Day(day(2), 10))

	tbl = load(t, cat, ident)
	var tombstones int
	for _, mf := range manifests(t, tbl, tbl.Metadata().SnapshotByID(second.SnapshotID)) {
		for _, e := range entries(t, tbl, mf, false) {
			if e.Status() != iceberg.EntryStatusDELETED {
				continue
			}
			tombstones++
			path := e.DataFile().FilePath()
			oldEntry, ok := old[path]
			assert.True(t, ok, "tombstone of %s, not of the replaced file", path)
			assert.Equal(t, second.SnapshotID, e.SnapshotID(), "tombstone of %s: SnapshotID", path)
			if ok {
				assert.Equal(t, oldEntry.SequenceNum(), e.SequenceNum(), "tombstone of %s: SequenceNum (data sequence number kept)", path)
				assert.Equal(t, first.SnapshotID, oldEntry.SnapshotID())
			}
		}
	}
	assert.Equal(t, 1, tombstones, "tombstones in the replacing snapshot")

	for _, s := range history(t, tbl) {
		for _, mf := range manifests(t, tbl, s) {
			es := entries(t, tbl, mf, false)
			onlyDeleted := len(es) > 0
			for _, e := range es {
				onlyDeleted = onlyDeleted && e.Status() == iceberg.EntryStatusDELETED
			}
			if onlyDeleted {
				assert.Equal(t, s.SnapshotID, mf.SnapshotID(), "snapshot %d keeps manifest %s of tombstones only, written by snapshot %d", s.SnapshotID, mf.FilePath(), mf.SnapshotID())
			}
		}
	}
}

// manifestFile matches a manifest (not a manifest list) written by icerun
// or iceberg-go.
var manifestFile = regexp.MustCompile(`-m\d+\.avro$`)

// manifestReads counts the opens and reads of manifests among ops.
func manifestReads(ops []string) (n int, names []string) {
	for _, op := range ops {
		for _, prefix := range []string{"io.open ", "io.read "} {
			if strings.HasPrefix(op, prefix) && manifestFile.MatchString(op) {
				n++
				names = append(names, op)
			}
		}
	}
	return n, names
}

// checkManifestSizes fails for a manifest of any snapshot of main with more
// than snapshotcommit.ManifestEntries entries.
func checkManifestSizes(t *testing.T, tbl *icetable.Table) {
	t.Helper()
	for _, s := range history(t, tbl) {
		for _, mf := range manifests(t, tbl, s) {
			n := len(entries(t, tbl, mf, false))
			assert.LessOrEqual(t, n, snapshotcommit.ManifestEntries, "snapshot %d: manifest %s has %d entries", s.SnapshotID, mf.FilePath(), n)
		}
	}
}

// TestSnapshotManifestsBoundedAndPruned: on a table of 1000 daily
// partitions, replacing one partition reads a few manifests, not all;
// every manifest stays within snapshotcommit.ManifestEntries entries.
func TestSnapshotManifestsBoundedAndPruned(t *testing.T) {
	if testing.Short() {
		t.Skip("a long run of commits: not in -short")
	}
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)
	const parts = 1000
	var all []orderdata.Order
	for i := range parts {
		all = append(all, orderdata.Day(day(i), 2)...)
	}
	replaceDays(t, w, all)
	tbl := load(t, cat, ident)
	mfs := manifests(t, tbl, tbl.CurrentSnapshot())
	require.GreaterOrEqual(t, len(mfs), parts/snapshotcommit.ManifestEntries, "manifests of %d partitions", parts)

	counter := faults.New(faults.Fail, 0)
	cw := openWriter(t, faults.WrapCatalog(cat, counter), ident)
	start := counter.Count()
	replaceDay(t, cw, day(500), repriced(orderdata.Day(day(500), 2), 5))
	n, names := manifestReads(counter.Ops()[start:])
	t.Logf("replacing 1 of %d partitions in %d manifests read %d manifests", parts, len(mfs), n)
	assert.GreaterOrEqual(t, n, 1, "manifest reads seen by the counter (is it counting?)")
	assert.LessOrEqual(t, n, 3, "replace of 1 of %d partitions in %d manifests read %d manifests:\n%v", parts, len(mfs), n, names)

	tbl = load(t, cat, ident)
	checkManifestSizes(t, tbl)
	checkSummaries(t, tbl)
}

// TestSnapshotSmallManifestsMerged: single-partition commits, new and
// repeated, never leave more than snapshotcommit.MergeSmallManifests manifests.
func TestSnapshotSmallManifestsMerged(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)
	content := map[time.Time][]orderdata.Order{}
	commits := 40
	if testing.Short() {
		commits = 20 // still more than twice MergeSmallManifests
	}
	for i := range commits {
		d := day(i)
		if i%4 == 3 {
			d = day(i / 2) // a partition that exists: a replacement with a tombstone
		}
		content[d] = repriced(orderdata.Day(d, 3), int64(i))
		replaceDay(t, w, d, content[d])
		tbl := load(t, cat, ident)
		mfs := manifests(t, tbl, tbl.CurrentSnapshot())
		assert.LessOrEqual(t, len(mfs), snapshotcommit.MergeSmallManifests, "manifests after commit %d", i+1)
	}
	assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "canonical scan")
	tbl := load(t, cat, ident)
	checkManifestSizes(t, tbl)
	checkSummaries(t, tbl)
}

// TestSnapshotInteropWithIcebergGo: iceberg-go's own append and overwrite
// between icerun's commits; icerun then replaces partitions both wrote.
// Nothing is lost or doubled.
func TestSnapshotInteropWithIcebergGo(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)
	content := map[time.Time][]orderdata.Order{}
	for i := range 3 {
		content[day(i)] = orderdata.Day(day(i), 10+i)
	}
	replaceDays(t, w, append(append(content[day(0)], content[day(1)]...), content[day(2)]...))

	// iceberg-go appends day 5
	content[day(5)] = orderdata.Day(day(5), 7)
	tbl := load(t, cat, ident)
	txn := tbl.NewTransaction()
	rows := orderdata.Reader(content[day(5)], 64)
	require.NoError(t, txn.Append(ctx, rows, nil))
	rows.Release()
	_, err := txn.Commit(ctx)
	require.NoError(t, err)

	// iceberg-go overwrites day1, written by icerun
	content[day(1)] = repriced(orderdata.Day(day(1), 9), 11)
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	tbl = load(t, cat, ident)
	txn = tbl.NewTransaction()
	rows = orderdata.Reader(content[day(1)], 64)
	require.NoError(t, txn.Overwrite(ctx, rows, nil, icetable.WithOverwriteFilter(spec.Filter(dayKey(t, w, day(1))))))
	rows.Release()
	_, err = txn.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "scan after iceberg-go's commits")

	// icerun replaces the partitions iceberg-go wrote, and one of its own
	content[day(5)] = repriced(orderdata.Day(day(5), 4), 12)
	replaceDay(t, w, day(5), content[day(5)])
	content[day(1)] = repriced(orderdata.Day(day(1), 6), 13)
	replaceDay(t, w, day(1), content[day(1)])
	content[day(2)] = repriced(orderdata.Day(day(2), 5), 14)
	content[day(6)] = orderdata.Day(day(6), 5)
	replaceDays(t, w, append(content[day(2)], content[day(6)]...))

	assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "canonical scan")
	tbl = load(t, cat, ident)
	checkManifestSizes(t, tbl)
	checkSummaries(t, tbl)
}

func flatten(content map[time.Time][]orderdata.Order) []orderdata.Order {
	var out []orderdata.Order
	for _, orders := range content {
		out = append(out, orders...)
	}
	return out
}

// TestSnapshotManifestsPrunedIntPartitions is the pruning check on
// identity partitions of an int column: manifests must cluster partitions
// by value for their summaries (lower and upper bounds) to prune.
func TestSnapshotManifestsPrunedIntPartitions(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "part", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "part", Transform: iceberg.IdentityTransform{}})
	ident := catalogtest.CreateTable(t, cat, "ints", sch, spec, nil)
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "part", Type: arrow.PrimitiveTypes.Int64}}
	const parts = 1000
	w := openWriter(t, cat, ident)
	rows := catalogtest.Reader(fields, parts, func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	})
	_, err := w.ReplacePartitions(ctx, rows)
	rows.Release()
	require.NoError(t, err)
	tbl := load(t, cat, ident)
	mfs := manifests(t, tbl, tbl.CurrentSnapshot())

	counter := faults.New(faults.Fail, 0)
	cw := openWriter(t, faults.WrapCatalog(cat, counter), ident)
	start := counter.Count()
	k, err := cw.Key("part=5")
	require.NoError(t, err)
	rows = catalogtest.Reader(fields, 1, func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(-5)
		b.Field(1).(*array.Int64Builder).Append(5)
	})
	_, err = cw.ReplacePartition(ctx, k, rows)
	rows.Release()
	require.NoError(t, err)
	n, names := manifestReads(counter.Ops()[start:])
	t.Logf("replacing part=5 of %d partitions in %d manifests read %d manifests", parts, len(mfs), n)
	assert.GreaterOrEqual(t, n, 1, "manifest reads seen by the counter (is it counting?)")
	assert.LessOrEqual(t, n, 3, "replace of part=5 of %d partitions in %d manifests read %d manifests:\n%v", parts, len(mfs), n, names)
}

// TestSnapshotConcurrentSchemaOrSpecChange: a schema or spec change that
// lands between a replacement's planning and its commit is never undone:
// the replacement fails with commit.ErrTableChanged, committing nothing and
// leaving no new data file, or succeeds with the change intact.
func TestSnapshotConcurrentSchemaOrSpecChange(t *testing.T) {
	ctx := context.Background()
	commitTxn := func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, f func(txn *icetable.Transaction) error) {
		tbl := load(t, cat, ident)
		txn := tbl.NewTransaction()
		require.NoError(t, f(txn))
		_, err := txn.Commit(ctx)
		require.NoError(t, err)
	}
	cases := []struct {
		name   string
		change func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier)
		intact func(t *testing.T, md icetable.Metadata)
	}{{
		name: "Writer.AddColumn",
		change: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
			require.NoError(t, openWriter(t, cat, ident).AddColumn(ctx, table.NewColumn{Name: "channel", Type: iceberg.PrimitiveTypes.String}))
		},
		intact: func(t *testing.T, md icetable.Metadata) {
			_, ok := md.CurrentSchema().FindFieldByName("channel")
			assert.True(t, ok, "column channel is gone: %v", md.CurrentSchema())
		},
	}, {
		name: "UpdateSchema rename",
		change: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
			commitTxn(t, cat, ident, func(txn *icetable.Transaction) error {
				return txn.UpdateSchema(true, false).RenameColumn([]string{"currency"}, "ccy").Commit()
			})
		},
		intact: func(t *testing.T, md icetable.Metadata) {
			_, ok := md.CurrentSchema().FindFieldByName("ccy")
			assert.True(t, ok, "rename of currency to ccy is gone: %v", md.CurrentSchema())
		},
	}, {
		name: "UpdateSpec",
		change: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
			commitTxn(t, cat, ident, func(txn *icetable.Transaction) error {
				return txn.UpdateSpec(true).AddField("customer_id", iceberg.BucketTransform{NumBuckets: 4}, "customer_bucket").Commit()
			})
		},
		intact: func(t *testing.T, md icetable.Metadata) {
			spec := md.PartitionSpec()
			assert.Equal(t, 2, spec.NumFields(), "default spec: %v", spec)
		},
	}}
	for _, tc := range cases {
		for _, empty := range []bool{false, true} {
			name := tc.name + "/table with data"
			if empty { // the replacement is the first commit: it also sets the name mapping
				name = tc.name + "/empty table"
			}
			t.Run(name, func(t *testing.T) {
				cat, dir := catalogtest.New(t)
				ident := ordersTable(t, cat, "orders", nil)
				if !empty {
					replaceDays(t, openWriter(t, cat, ident), days(10, day(0), day(1)))
				}
				current := snapshotID(load(t, cat, ident))
				snaps := catalogtest.Snapshots(t, cat, ident)
				files := catalogtest.DataFiles(t, dir)

				ic := &catalogtest.Interposer{Catalog: cat}
				ic.Before = func() { tc.change(t, cat, ident) }
				w := openWriter(t, ic, ident)
				rows := orderdata.Reader(repriced(orderdata.Day(day(0), 10), 5), 64)
				_, err := w.ReplacePartition(ctx, dayKey(t, w, day(0)), rows)
				rows.Release()
				require.Nil(t, ic.Before, "the change ran")

				tbl := load(t, cat, ident)
				tc.intact(t, tbl.Metadata())
				if err == nil {
					t.Logf("committed after the change")
					checkCommittedAfter(t, tbl)
					return
				}
				assert.ErrorIs(t, err, commit.ErrTableChanged)
				assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "snapshots after a failed replacement")
				assert.Equal(t, files, catalogtest.DataFiles(t, dir), "data files after a failed replacement")
				assert.Equal(t, current, snapshotID(tbl), "current snapshot after a failed replacement")
			})
		}
	}
}

func snapshotID(tbl *icetable.Table) int64 {
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}

// checkCommittedAfter checks a replacement that committed after a schema
// or spec change: it was made for the table as it is now (its snapshot's
// schema and its files' spec are the current ones), and it left the name
// mapping of the current schema.
func checkCommittedAfter(t *testing.T, tbl *icetable.Table) {
	t.Helper()
	md := tbl.Metadata()
	s := tbl.CurrentSnapshot()
	if assert.NotNil(t, s.SchemaID, "schema id of the snapshot") {
		assert.Equal(t, md.CurrentSchema().ID, *s.SchemaID, "schema id of the snapshot committed after the change")
	}
	for path, e := range liveFiles(t, tbl, s) {
		if e.SnapshotID() == s.SnapshotID {
			assert.Equal(t, int32(md.DefaultPartitionSpec()), e.DataFile().SpecID(), "spec of data file %s committed after the change", path)
		}
	}
	checkMapping(t, md)
}

// checkMapping fails when md has a name mapping that does not map a
// top-level column of its current schema by its current name: a name
// mapping computed from an older schema overwrote a newer one.
func checkMapping(t *testing.T, md icetable.Metadata) {
	t.Helper()
	nm := md.NameMapping()
	if nm == nil {
		return
	}
	for _, f := range md.CurrentSchema().Fields() {
		found := false
		for _, m := range nm {
			found = found || (m.FieldID != nil && *m.FieldID == f.ID && slices.Contains(m.Names, f.Name))
		}
		assert.True(t, found, "name mapping %v does not map column %d %q", nm, f.ID, f.Name)
	}
}
