package table_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
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
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/table"
)

// refs are the snapshot ids of main (0 for none) and of branch (0 when it
// does not exist).
func refs(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, branch string) (mainID, branchID int64) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	if s := tbl.CurrentSnapshot(); s != nil {
		mainID = s.SnapshotID
	}
	if r, ok := snapshotcommit.Ref(tbl.Metadata(), branch); ok {
		branchID = r.SnapshotID
	}
	return mainID, branchID
}

// branchScan is the canonical scan of branch's head.
func branchScan(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, branch string) []byte {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	view, err := snapshotcommit.OnBranch(tbl, branch)
	require.NoError(t, err)
	return catalogtest.CanonicalTable(t, view)
}

// parentOf is the parent snapshot id of snapshot id (0 for none).
func parentOf(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, id int64) int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	s := tbl.Metadata().SnapshotByID(id)
	require.NotNil(t, s, "snapshot %d", id)
	if s.ParentSnapshotID == nil {
		return 0
	}
	return *s.ParentSnapshotID
}

// rowsOf counts the rows of a reader and releases it.
func rowsOf(t *testing.T, r array.RecordReader) int64 {
	t.Helper()
	defer r.Release()
	var n int64
	for r.Next() {
		n += r.RecordBatch().NumRows()
	}
	require.NoError(t, r.Err())
	return n
}

// collect is an aggregate that returns its source rows as they are.
func collect(_ context.Context, src array.RecordReader) (array.RecordReader, error) {
	var recs []arrow.RecordBatch
	for src.Next() {
		rec := src.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := src.Err(); err != nil {
		return nil, err
	}
	r, err := array.NewRecordReader(src.Schema(), recs)
	for _, rec := range recs {
		rec.Release()
	}
	return r, err
}

func TestBranchWritesLeaveMainAsItWas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	tests := []struct {
		name  string
		write func(t *testing.T, cat catalog.Catalog, w *table.Writer) (commit.Result, error)
	}{
		{"ReplacePartition", func(t *testing.T, _ catalog.Catalog, w *table.Writer) (commit.Result, error) {
			return w.ReplacePartition(ctx, dayKey(t, w, day1), reader(orderdata.Day(day1, 30)))
		}},
		{"ReplacePartitions", func(t *testing.T, _ catalog.Catalog, w *table.Writer) (commit.Result, error) {
			return w.ReplacePartitions(ctx, reader(append(orderdata.Day(day0, 5), orderdata.Day(day1, 7)...)))
		}},
		{"ReplaceWindow", func(t *testing.T, _ catalog.Catalog, w *table.Writer) (commit.Result, error) {
			return w.ReplaceWindow(ctx, window(t, w, day1, 2), table.RejectLate, reader(orderdata.Day(day1, 9)))
		}},
		{"Upsert", func(t *testing.T, _ catalog.Catalog, w *table.Writer) (commit.Result, error) {
			o := orderdata.Day(day0, 40)[0]
			o.Amount++ // a corrected order
			return w.Upsert(ctx, reader([]orderdata.Order{o}), "order_id")
		}},
		{"Recompute", func(t *testing.T, cat catalog.Catalog, w *table.Writer) (commit.Result, error) {
			src := catalogtest.CreateTable(t, cat, "src_orders", orderdata.Schema, orderdata.Spec, nil)
			replaceDay(t, open(t, cat, src), day1, 11)
			srcTbl, err := cat.LoadTable(ctx, src)
			require.NoError(t, err)
			return w.Recompute(ctx, dayKey(t, w, day1), table.Source{Table: srcTbl, Key: dayKey(t, w, day1)}, collect)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, ident, _ := ordersTable(t)
			replaceDay(t, open(t, cat, ident), day0, 40)
			mainID, _ := refs(t, cat, ident, "audit")
			mainScan := catalogtest.CanonicalScan(t, cat, ident)

			w := open(t, cat, ident, table.WithBranch("audit"))
			res, err := tt.write(t, cat, w)
			require.NoError(t, err)
			require.False(t, res.Unchanged)

			gotMain, head := refs(t, cat, ident, "audit")
			assert.Equal(t, mainID, gotMain, "main's snapshot moved")
			assert.Equal(t, mainScan, catalogtest.CanonicalScan(t, cat, ident), "main's rows changed")
			assert.Equal(t, res.SnapshotID, head, "the branch's head is not the write's snapshot")
			assert.Equal(t, mainID, parentOf(t, cat, ident, head), "the branch is cut from main's snapshot")
			assert.NotEqual(t, mainScan, branchScan(t, cat, ident, "audit"))

			// A second write's parent is the branch's head, not main.
			res2 := replaceDay(t, w, day0.AddDate(0, 0, 5), 3)
			assert.Equal(t, head, parentOf(t, cat, ident, res2.SnapshotID))
			gotMain, _ = refs(t, cat, ident, "audit")
			assert.Equal(t, mainID, gotMain, "main's snapshot moved")
		})
	}
}

func TestBranchUnchangedReadsTheBranch(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	bw := open(t, cat, ident, table.WithBranch("audit"), table.WithCodeVersion("v1"))
	mw := open(t, cat, ident, table.WithCodeVersion("v1"))
	first := replaceDay(t, bw, day0, 20)
	again := replaceDay(t, bw, day0, 20)
	assert.True(t, again.Unchanged, "the branch holds this input: Unchanged")
	assert.Equal(t, first.SnapshotID, again.SnapshotID, "Unchanged names the branch's head")

	onMain := replaceDay(t, mw, day0, 20)
	assert.False(t, onMain.Unchanged, "main does not hold the branch's write")

	// Backfill-style resume reads the branch's lineage through its view.
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	view, err := snapshotcommit.OnBranch(tbl, "audit")
	require.NoError(t, err)
	last := table.LastWrites(view, []string{"event_date=2026-07-14"})
	assert.Equal(t, first.SnapshotID, last["event_date=2026-07-14"].SnapshotID)
}

func TestPublishFastForward(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, dir := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 40)
	w := open(t, cat, ident, table.WithBranch("audit"))
	replaceDay(t, w, day0, 10)
	replaceDay(t, w, day0.AddDate(0, 0, 1), 15)
	_, head := refs(t, cat, ident, "audit")
	want := branchScan(t, cat, ident, "audit")
	files := catalogtest.DataFiles(t, dir)
	snaps := catalogtest.Snapshots(t, cat, ident)

	res, err := w.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.False(t, res.Unchanged)
	assert.Equal(t, head, res.SnapshotID)
	assert.Equal(t, []string{"event_date=2026-07-14", "event_date=2026-07-15"}, res.Partitions)
	mainID, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, head, mainID, "main's ref moves to the branch's head")
	assert.Equal(t, want, catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "a fast-forward writes no file")
	assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "a fast-forward makes no snapshot")

	again, err := w.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.True(t, again.Unchanged, "publishing again is a no-op")
	assert.Equal(t, head, again.SnapshotID)
}

func TestPublishEmptyTableBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident, table.WithBranch("audit"))
	res := replaceDay(t, w, day0, 10)
	mainID, head := refs(t, cat, ident, "audit")
	assert.Zero(t, mainID, "main of an empty table stays empty")
	assert.Equal(t, res.SnapshotID, head)
	assert.Zero(t, parentOf(t, cat, ident, head), "an empty table's branch starts empty")
	assert.Nil(t, catalogtest.CanonicalScan(t, cat, ident))

	rows, err := w.ReadBranch(ctx, "audit", dayKey(t, w, day0))
	require.NoError(t, err)
	assert.Equal(t, int64(10), rowsOf(t, rows))

	pub, err := w.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.Equal(t, head, pub.SnapshotID)
	assert.Equal(t, branchScan(t, cat, ident, "audit"), catalogtest.CanonicalScan(t, cat, ident))
}

func TestPublishReplansOnMovedMain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1, day2 := day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 2)
	cat, ident, dir := ordersTable(t)
	mw := open(t, cat, ident, table.WithCodeVersion("v1"))
	replaceDay(t, mw, day0, 40)
	replaceDay(t, mw, day1, 30)
	bw := open(t, cat, ident, table.WithBranch("audit"), table.WithCodeVersion("v2"))
	replaceDay(t, bw, day0, 10)
	replaceDay(t, mw, day1, 31) // main moves, on another partition
	replaceDay(t, mw, day2, 5)
	mainBefore, head := refs(t, cat, ident, "audit")
	files := catalogtest.DataFiles(t, dir)

	res, err := mw.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.False(t, res.Unchanged)
	assert.Equal(t, []string{"event_date=2026-07-14"}, res.Partitions)
	assert.Equal(t, int64(10), res.AddedRows)
	assert.Equal(t, int64(40), res.DeletedRows)
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "a re-planned publish reuses the branch's data files")
	mainID, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, mainBefore, parentOf(t, cat, ident, mainID), "one snapshot on main's current state")

	// Main holds the branch's day0 and its own day1 and day2.
	scan := string(catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, 10+31+5, strings.Count(scan, "\n"))
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	props := tbl.CurrentSnapshot().Summary.Properties
	assert.Equal(t, "audit", props[commit.SummaryPublishedBranch])
	assert.Equal(t, "v2", props[commit.SummaryCodeVersion], "the lineage of the branch's writes is carried to main")
	rows, err := mw.ReadBranch(ctx, icetable.MainBranch, dayKey(t, mw, day0))
	require.NoError(t, err)
	assert.Equal(t, int64(10), rowsOf(t, rows))

	again, err := mw.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.True(t, again.Unchanged, "publishing again is a no-op")
	assert.Equal(t, mainID, again.SnapshotID)

	// Main's lineage now says day0 holds the branch's input from v2.
	v2 := replaceDay(t, open(t, cat, ident, table.WithCodeVersion("v2")), day0, 10)
	assert.True(t, v2.Unchanged, "a main write of the published input is Unchanged")

	// The branch goes on from its own head after a publish.
	replaceDay(t, bw, day2, 6)
	_, head2 := refs(t, cat, ident, "audit")
	assert.Equal(t, head, parentOf(t, cat, ident, head2))
	res, err = mw.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.Equal(t, []string{"event_date=2026-07-16"}, res.Partitions, "only the writes since the last publish")
	assert.Equal(t, 10+31+6, strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n"))
}

func TestPublishConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	cat, ident, dir := ordersTable(t)
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	replaceDay(t, bw, day0, 10)
	replaceDay(t, bw, day1, 12)
	replaceDay(t, mw, day0, 41) // main replaced a partition the branch replaced
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)
	files := catalogtest.DataFiles(t, dir)

	_, err := mw.Publish(ctx, "audit")
	require.ErrorIs(t, err, commit.ErrPublishConflict)
	var pc *commit.PublishConflictError
	require.ErrorAs(t, err, &pc)
	assert.Equal(t, []string{"event_date=2026-07-14"}, pc.Partitions)
	assert.Contains(t, err.Error(), "event_date=2026-07-14")
	after, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, mainID, after, "a conflict leaves main as it was")
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "a conflict leaves no file behind")

	res, err := open(t, cat, ident, table.WithForce()).Publish(ctx, "audit")
	require.NoError(t, err, "WithForce lets the branch win")
	assert.Equal(t, []string{"event_date=2026-07-14", "event_date=2026-07-15"}, res.Partitions)
	assert.Equal(t, branchScan(t, cat, ident, "audit"), catalogtest.CanonicalScan(t, cat, ident))
}

func TestPublishTwoBranchesInEitherOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	scans := map[string][]byte{}
	for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
		cat, ident, _ := ordersTable(t)
		mw := open(t, cat, ident)
		replaceDay(t, mw, day0, 40)
		replaceDay(t, mw, day1, 30)
		replaceDay(t, open(t, cat, ident, table.WithBranch("a")), day0, 10)
		replaceDay(t, open(t, cat, ident, table.WithBranch("b")), day1, 20)
		for _, b := range order {
			res, err := mw.Publish(ctx, b)
			require.NoError(t, err, "publish %s in order %v", b, order)
			require.False(t, res.Unchanged)
		}
		scans[strings.Join(order, "")] = catalogtest.CanonicalScan(t, cat, ident)
		assert.Equal(t, 30, strings.Count(string(scans[strings.Join(order, "")]), "\n"))
	}
	assert.Equal(t, scans["ab"], scans["ba"], "the order of publishing does not matter")
}

func TestDropBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	replaceDay(t, bw, day0, 10)

	require.NoError(t, mw.DropBranch(ctx, "audit"))
	after, head := refs(t, cat, ident, "audit")
	assert.Zero(t, head, "the branch ref is gone")
	assert.Equal(t, mainID, after)
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident))

	for name, err := range map[string]error{
		"drop again":   mw.DropBranch(ctx, "audit"),
		"publish":      func() error { _, err := mw.Publish(ctx, "audit"); return err }(),
		"read":         func() error { _, err := mw.ReadBranch(ctx, "audit", dayKey(t, mw, day0)); return err }(),
		"drop main":    mw.DropBranch(ctx, icetable.MainBranch),
		"publish \"\"": func() error { _, err := mw.Publish(ctx, ""); return err }(),
	} {
		want := commit.ErrNoSuchBranch
		if strings.Contains(name, "main") || strings.Contains(name, `""`) {
			want = table.ErrBadBranch
		}
		assert.ErrorIs(t, err, want, name)
	}

	// A dropped branch can be cut again, from main's current snapshot.
	res := replaceDay(t, bw, day0, 10)
	assert.Equal(t, mainID, parentOf(t, cat, ident, res.SnapshotID))
}

func TestWithBranchBadName(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	for _, name := range []string{"", icetable.MainBranch} {
		_, err := table.Open(context.Background(), cat, ident, table.WithBranch(name))
		assert.ErrorIs(t, err, table.ErrBadOption, "WithBranch(%q)", name)
		assert.ErrorIs(t, err, table.ErrBadBranch, "WithBranch(%q)", name)
	}
}

func TestBranchUpsertMergesWithTheBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 40)
	mainScan := catalogtest.CanonicalScan(t, cat, ident)
	w := open(t, cat, ident, table.WithBranch("audit"))
	day := orderdata.Day(day0, 40)
	for i := range 2 { // two corrections, one upsert each
		o := day[i]
		o.Amount += 1000
		day[i] = o
		res, err := w.Upsert(ctx, reader([]orderdata.Order{o}), "order_id")
		require.NoError(t, err)
		require.False(t, res.Unchanged)
	}
	want := open(t, cat, ident, table.WithBranch("want"))
	replaceDay(t, want, day0, 0) // cut "want" from main, then fill it with both corrections
	_, err := want.ReplacePartition(ctx, dayKey(t, want, day0), reader(day))
	require.NoError(t, err)
	assert.Equal(t, branchScan(t, cat, ident, "want"), branchScan(t, cat, ident, "audit"), "the second upsert merges with the branch's rows")
	assert.Equal(t, mainScan, catalogtest.CanonicalScan(t, cat, ident))
}

// A branch replaces a day of a table whose main still holds month files
// of an older spec; main moves meanwhile: the publish removes the day's
// rows from main's month file and keeps the month's other days.
func TestPublishReplansOverOlderSpecFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	aug3 := time.Date(2026, 8, 3, 0, 0, 0, 0, time.UTC)
	fresh := orderdata.Day(day0, 3)
	for i := range fresh {
		fresh[i].Amount = 999_999
	}
	build := func(t *testing.T) (catalog.Catalog, icetable.Identifier) {
		cat, _ := catalogtest.New(t)
		monthly := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{5}, FieldID: 1000, Name: "event_month", Transform: iceberg.MonthTransform{}})
		ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, monthly, nil)
		w := open(t, cat, ident)
		_, err := w.ReplacePartition(ctx, key(t, w, "event_month=2026-07"), reader(july()))
		require.NoError(t, err)
		evolveSpec(t, cat, ident, "event_month", "event_ts", iceberg.DayTransform{}, "event_day")
		return cat, ident
	}
	replace := func(t *testing.T, w *table.Writer, k string, orders []orderdata.Order) {
		_, err := w.ReplacePartition(ctx, key(t, w, k), reader(orders))
		require.NoError(t, err)
	}

	refCat, refIdent := build(t) // the same writes, straight to main
	ref := open(t, refCat, refIdent)
	replace(t, ref, "event_day=2026-07-14", fresh)
	replace(t, ref, "event_day=2026-08-03", orderdata.Day(aug3, 4))

	cat, ident := build(t)
	bw, mw := open(t, cat, ident, table.WithBranch("audit")), open(t, cat, ident)
	replace(t, bw, "event_day=2026-07-14", fresh)
	replace(t, mw, "event_day=2026-08-03", orderdata.Day(aug3, 4)) // main moves
	res, err := mw.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.Equal(t, int64(10), res.DeletedRows, "the 14th's 10 rows in main's month file")
	assert.Equal(t, string(catalogtest.CanonicalScan(t, refCat, refIdent)), string(catalogtest.CanonicalScan(t, cat, ident)))
}

func TestPublishFormatVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	for _, v := range []int{1, 2, 3} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": strconv.Itoa(v)})
			mw := open(t, cat, ident)
			replaceDay(t, mw, day0, 40)
			bw := open(t, cat, ident, table.WithBranch("audit"))
			replaceDay(t, bw, day0, 10)
			replaceDay(t, mw, day1, 20) // main moves
			_, err := mw.Publish(ctx, "audit")
			require.NoError(t, err)
			assert.Equal(t, 30, strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n"))
			tbl, err := cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			require.Equal(t, v, tbl.Metadata().Version())
		})
	}
}

func TestPublishWhileMainMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 40)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	replaceDay(t, bw, day0, 10)

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(2)
	go func() { // another process keeps writing other days to main
		defer wg.Done()
		w, err := table.Open(ctx, cat, ident)
		if err != nil {
			errs <- err
			return
		}
		for d := 1; d <= 6; d++ {
			day := day0.AddDate(0, 0, d)
			k, err := w.Key("event_date=" + day.Format(time.DateOnly))
			if err == nil {
				_, err = w.ReplacePartition(ctx, k, reader(orderdata.Day(day, 5)))
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	results := make([]commit.Result, 2)
	go func() { // two publishers of the same branch
		defer wg.Done()
		var inner sync.WaitGroup
		for i := range results {
			inner.Add(1)
			go func() {
				defer inner.Done()
				w, err := table.Open(ctx, cat, ident)
				if err == nil {
					results[i], err = w.Publish(ctx, "audit")
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		inner.Wait()
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	published := 0
	for _, r := range results {
		if !r.Unchanged {
			published++
		}
	}
	assert.Equal(t, 1, published, "one publisher publishes, the other finds it done: %+v", results)
	assert.Equal(t, 10+6*5, strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n"))
	rows, err := bw.ReadBranch(ctx, icetable.MainBranch, dayKey(t, bw, day0))
	require.NoError(t, err)
	assert.Equal(t, int64(10), rowsOf(t, rows), "main holds the branch's day")
}
