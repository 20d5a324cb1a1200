package table_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

func upsert(t *testing.T, w *table.Writer, orders []orderdata.Order) commit.Result {
	t.Helper()
	rows := reader(orders)
	defer rows.Release()
	res, err := w.Upsert(context.Background(), rows, "order_id")
	require.NoError(t, err)
	return res
}

// partitionPaths lists the data files of one event_date partition.
func partitionPaths(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, day time.Time) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	var out []string
	for _, tk := range tasks {
		k, err := spec.KeyFromValues(tk.File.Partition())
		require.NoError(t, err)
		if k.String() == "event_date="+day.Format(time.DateOnly) {
			out = append(out, tk.File.FilePath())
		}
	}
	slices.Sort(out)
	return out
}

// orderIDs counts the rows of each order id in the table.
func orderIDs(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(catalogtest.CanonicalScan(t, cat, ident))), "\n") {
		if line != "" {
			out[strings.Split(line, "|")[0]]++
		}
	}
	return out
}

func twice(orders []orderdata.Order) []orderdata.Order {
	out := append(slices.Clone(orders), orders...)
	slices.Reverse(out)
	return out
}

func TestUpsertReplayIsIdempotent(t *testing.T) {
	t.Parallel()
	batch := append(orderdata.Day(day0, 200), orderdata.Day(day0.AddDate(0, 0, 1), 50)...)
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	upsert(t, w, batch)
	once := catalogtest.CanonicalScan(t, cat, ident)
	snaps := catalogtest.Snapshots(t, cat, ident)

	res := upsert(t, w, batch)
	assert.True(t, res.Unchanged, "Upsert(same batch again).Unchanged = false, want true")
	assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "a replay must not make a snapshot")
	assert.Equal(t, string(once), string(catalogtest.CanonicalScan(t, cat, ident)), "table after replaying the batch")

	cat2, ident2, _ := ordersTable(t)
	upsert(t, open(t, cat2, ident2), twice(batch))
	assert.Equal(t, string(once), string(catalogtest.CanonicalScan(t, cat2, ident2)), "table after a batch holding every event twice")
}

func TestUpsertReplacesMatchingKeysAndAddsNewOnes(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 100)
	changed := orderdata.Day(day0, 150)[50:]
	for i := range changed {
		changed[i].Amount = 1_000_000 + int64(i)
	}
	res := upsert(t, w, changed)
	assert.Equal(t, int64(150), res.AddedRows, "Upsert(50 changed + 50 new).AddedRows")
	assert.Equal(t, int64(100), res.DeletedRows, "Upsert(50 changed + 50 new).DeletedRows")

	want := orderdata.Day(day0, 100)[:50]
	want = append(want, changed...)
	cat2, ident2, _ := ordersTable(t)
	w2 := open(t, cat2, ident2)
	_, err := w2.ReplacePartition(context.Background(), dayKey(t, w2, day0), reader(want))
	require.NoError(t, err)
	assert.Equal(t, string(catalogtest.CanonicalScan(t, cat2, ident2)), string(catalogtest.CanonicalScan(t, cat, ident)),
		"Upsert(orders 50..149 changed) over orders 0..99 = table above, want orders 0..49 then the changed ones")
}

func TestUpsertThreePartitionsOneSnapshot(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	days := []time.Time{day0, day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 2), day0.AddDate(0, 0, 3)}
	for _, d := range days {
		replaceDay(t, w, d, 40)
	}
	untouched := partitionPaths(t, cat, ident, days[3])
	touchedBefore := partitionPaths(t, cat, ident, days[0])
	snaps := catalogtest.Snapshots(t, cat, ident)

	var in []orderdata.Order
	for _, d := range days[:3] {
		o := orderdata.Day(d, 45)[30:] // 10 changed, 5 new per day
		for i := range o {
			o[i].Amount = -1
		}
		in = append(in, o...)
	}
	res := upsert(t, w, in)
	assert.Equal(t, snaps+1, catalogtest.Snapshots(t, cat, ident), "snapshots after one upsert of three partitions")
	assert.Len(t, res.Partitions, 3, "Upsert(3 days).Partitions = %v", res.Partitions)
	assert.Equal(t, untouched, partitionPaths(t, cat, ident, days[3]), "the untouched partition's files")
	assert.NotEqual(t, touchedBefore, partitionPaths(t, cat, ident, days[0]), "a touched partition's files")
	ids := orderIDs(t, cat, ident)
	assert.Equal(t, 3*45+40, len(ids), "keys present")
	for id, n := range ids {
		if n != 1 {
			t.Errorf("order %s: %d rows, want 1", id, n)
		}
	}
}

func TestUpsertLateRecordTouchesOnlyItsPartition(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 20)
	replaceDay(t, w, day0.AddDate(0, 0, 1), 20)
	today := partitionPaths(t, cat, ident, day0.AddDate(0, 0, 1))
	late := orderdata.At(day0, 20, 21) // one more order of yesterday
	res := upsert(t, w, []orderdata.Order{late})
	assert.Equal(t, []string{"event_date=" + day0.Format(time.DateOnly)}, res.Partitions)
	assert.Equal(t, today, partitionPaths(t, cat, ident, day0.AddDate(0, 0, 1)), "today's files after a late record of yesterday")
	assert.Len(t, orderIDs(t, cat, ident), 41)
}

func TestUpsertDuplicateKeys(t *testing.T) {
	t.Parallel()
	base := orderdata.Day(day0, 10)
	later := base[3]
	later.Amount, later.EventTime = 777, later.EventTime.Add(time.Minute)
	conflicting := append(slices.Clone(base), later)

	t.Run("no order column", func(t *testing.T) {
		cat, ident, dir := ordersTable(t)
		w := open(t, cat, ident)
		_, err := w.Upsert(context.Background(), reader(conflicting), "order_id")
		require.ErrorIs(t, err, table.ErrDuplicateKey)
		assert.Contains(t, err.Error(), fmt.Sprint("order_id=", base[3].ID))
		assert.Equal(t, 0, catalogtest.Snapshots(t, cat, ident))
		assert.Empty(t, catalogtest.DataFiles(t, dir), "no data file may stay behind")
	})
	t.Run("greatest event_ts wins", func(t *testing.T) {
		cat, ident, _ := ordersTable(t)
		w := open(t, cat, ident, table.WithUpsertOrder("event_ts"))
		for _, in := range [][]orderdata.Order{conflicting, twice(conflicting)} {
			_, err := w.Upsert(context.Background(), reader(in), "order_id")
			require.NoError(t, err)
			got := string(catalogtest.CanonicalScan(t, cat, ident))
			assert.Contains(t, got, fmt.Sprintf("%d|%d|777|", later.ID, later.Customer))
			assert.Len(t, orderIDs(t, cat, ident), 10)
		}
	})
	t.Run("same order value, different rows", func(t *testing.T) {
		cat, ident, _ := ordersTable(t)
		w := open(t, cat, ident, table.WithUpsertOrder("event_ts"))
		tie := base[3]
		tie.Amount = 5
		_, err := w.Upsert(context.Background(), reader(append(slices.Clone(base), tie)), "order_id")
		assert.ErrorIs(t, err, table.ErrDuplicateKey)
	})
}

func TestUpsertBadKey(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	for _, keys := range [][]string{nil, {"nope"}, {"order_id", "nope"}} {
		_, err := w.Upsert(context.Background(), reader(orderdata.Day(day0, 3)), keys...)
		assert.ErrorIs(t, err, table.ErrBadUpsertKey, "Upsert(keys %v)", keys)
	}
	_, err := w.Upsert(context.Background(), nil, "order_id")
	assert.ErrorIs(t, err, table.ErrNilInput)
	_, err = table.Open(context.Background(), cat, ident, table.WithUpsertOrder(""))
	assert.ErrorIs(t, err, table.ErrBadOption)
}

// interleaveCatalog runs before() once, just before the first commit that
// goes through it: another writer's whole commit lands in between this
// writer's read of the partition and its commit.
type interleaveCatalog struct {
	catalog.Catalog
	once   sync.Once
	before func()
}

func (c *interleaveCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	c.once.Do(c.before)
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

func (c *interleaveCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func TestConcurrentUpsertsDisjointKeys(t *testing.T) {
	t.Parallel()
	all := orderdata.Day(day0, 300)
	a, b := all[100:200], all[200:300]
	t.Run("interleaved", func(t *testing.T) {
		cat, ident, _ := ordersTable(t)
		replaceDay(t, open(t, cat, ident), day0, 100)
		ic := &interleaveCatalog{Catalog: cat, before: func() { upsert(t, open(t, cat, ident), b) }}
		res := upsert(t, open(t, ic, ident), a)
		assert.GreaterOrEqual(t, res.Attempts, 2, "Upsert after another upsert landed in between: Attempts")
		ids := orderIDs(t, cat, ident)
		assert.Equal(t, 300, len(ids), "both writers' keys must be present")
		for id, n := range ids {
			if n != 1 {
				t.Errorf("order %s: %d rows, want 1", id, n)
			}
		}
	})
	t.Run("goroutines", func(t *testing.T) {
		cat, ident, _ := ordersTable(t)
		replaceDay(t, open(t, cat, ident), day0, 100)
		const writers = 4
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			part := all[100+50*i : 150+50*i]
			wg.Go(func() {
				w, err := table.Open(context.Background(), cat, ident)
				if err == nil {
					_, err = w.Upsert(context.Background(), reader(part), "order_id")
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			assert.NoError(t, err, "writer %d", i)
		}
		ids := orderIDs(t, cat, ident)
		assert.Equal(t, 300, len(ids), "keys present")
		for id, n := range ids {
			if n != 1 {
				t.Errorf("order %s: %d rows, want 1", id, n)
			}
		}
	})
}

// A partition with rows in files of an older spec cannot be merged
// exactly by Upsert: it refuses, and leaves the table as it was.
func TestUpsertRefusesOlderSpecFiles(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 10)
	evolveToMonth(t, cat, ident)
	before := catalogtest.CanonicalScan(t, cat, ident)
	files := catalogtest.DataFiles(t, dir)
	_, err := open(t, cat, ident).Upsert(context.Background(), reader(orderdata.Day(day0, 3)), "order_id")
	require.ErrorIs(t, err, commit.ErrUnsupported)
	assert.Equal(t, string(before), string(catalogtest.CanonicalScan(t, cat, ident)))
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "staged files must be removed")
}

// The duplicate rule does not depend on input order: a tie at one order
// value is resolved by a greater value wherever it comes in the input.
func TestUpsertDuplicateRuleIsOrderIndependent(t *testing.T) {
	t.Parallel()
	base := orderdata.Day(day0, 1)[0]
	tieA, tieB, top := base, base, base
	tieA.Amount, tieA.Currency = 2, "EUR"
	tieB.Amount, tieB.Currency = 2, "USD"
	top.Amount = 3
	for _, in := range [][]orderdata.Order{{tieA, tieB, top}, {top, tieA, tieB}, {tieA, top, tieB}} {
		cat, ident, _ := ordersTable(t)
		w := open(t, cat, ident, table.WithUpsertOrder("amount_minor"))
		_, err := w.Upsert(context.Background(), reader(in), "order_id")
		require.NoError(t, err)
		assert.Equal(t, []string{"3"}, column(t, cat, ident, "amount_minor"))
	}
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident, table.WithUpsertOrder("amount_minor"))
	_, err := w.Upsert(context.Background(), reader([]orderdata.Order{tieA, tieB}), "order_id")
	assert.ErrorIs(t, err, table.ErrDuplicateKey)
}

// The input is spilled to staged files while merging; none of them stays.
func TestUpsertLeavesOnlyLiveFiles(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	in := append(orderdata.Day(day0, 50), orderdata.Day(day0.AddDate(0, 0, 1), 50)...)
	for range 2 { // the second run is Unchanged
		_, err := w.Upsert(context.Background(), reader(in), "order_id")
		require.NoError(t, err)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	require.NoError(t, err)
	var live []string
	for _, task := range tasks {
		live = append(live, strings.TrimPrefix(task.File.FilePath(), "file://"))
	}
	slices.Sort(live)
	assert.Equal(t, live, catalogtest.DataFiles(t, dir))
}

// TestUpsertRowGroups: a partition Upsert rewrites is written in row
// groups of at most 131,072 rows (what keeps its memory within a full
// replace's), unless the table sets write.parquet.row-group-limit, which
// is honored.
func TestUpsertRowGroups(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a large partition: not in -short")
	}
	for _, tc := range []struct {
		props              iceberg.Properties
		replaced, upserted []int64
	}{
		{nil, []int64{200_000}, []int64{131_072, 68_928}},
		{iceberg.Properties{icetable.ParquetRowGroupLimitKey: "150000"}, []int64{150_000, 50_000}, []int64{150_000, 50_000}},
	} {
		cat, _ := catalogtest.New(t)
		ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, tc.props)
		w := open(t, cat, ident, table.WithParallelWrite(1, 1<<20)) // one file
		replaceDay(t, w, day0, 200_000)
		assert.Equal(t, tc.replaced, rowGroups(t, cat, ident), "replace, %v", tc.props)
		changed := orderdata.Day(day0, 10)
		for i := range changed {
			changed[i].Amount++
		}
		res := upsert(t, w, changed)
		require.False(t, res.Unchanged)
		assert.Equal(t, tc.upserted, rowGroups(t, cat, ident), "upsert, %v", tc.props)
	}
}

// TestReplaceRowGroups: a replace writes row groups of at most 524,288
// rows (a large partition's memory does not follow its size), unless the
// table sets write.parquet.row-group-limit, which is honored.
func TestReplaceRowGroups(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a large partition: not in -short")
	}
	for _, tc := range []struct {
		props iceberg.Properties
		want  []int64
	}{
		{nil, []int64{524_288, 75_712}},
		{iceberg.Properties{icetable.ParquetRowGroupLimitKey: "400000"}, []int64{400_000, 200_000}},
		{iceberg.Properties{icetable.ParquetRowGroupLimitKey: "1048576"}, []int64{600_000}},
	} {
		cat, _ := catalogtest.New(t)
		ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, tc.props)
		w := open(t, cat, ident, table.WithParallelWrite(1, 1<<20)) // one file
		replaceDay(t, w, day0, 600_000)
		assert.Equal(t, tc.want, rowGroups(t, cat, ident), "%v", tc.props)
	}
}

// rowGroups lists the rows of every row group of the table's data files.
func rowGroups(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	var out []int64
	for _, f := range liveFiles(t, tbl) {
		in, err := fsys.Open(f.FilePath())
		require.NoError(t, err)
		rdr, err := file.NewParquetReader(in)
		require.NoError(t, err)
		for i := range rdr.NumRowGroups() {
			out = append(out, rdr.MetaData().RowGroup(i).NumRows())
		}
		require.NoError(t, rdr.Close())
	}
	return out
}
