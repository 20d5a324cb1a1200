package table_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// nightly is the input of a nightly run ending at day0 with a 3-day
// window: 20 orders of day0-2, none of day0-1, 30 of day0, plus late
// orders of day0-5 and day0-6.
func nightly() []orderdata.Order {
	var in []orderdata.Order
	in = append(in, orderdata.Day(day0.AddDate(0, 0, -2), 20)...)
	in = append(in, orderdata.Day(day0, 30)...)
	in = append(in, orderdata.Day(day0.AddDate(0, 0, -5), 2)...)
	in = append(in, orderdata.Day(day0.AddDate(0, 0, -6), 1)...)
	return in
}

func window(t *testing.T, w *table.Writer, end time.Time, n int) []partition.Key {
	t.Helper()
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	keys, err := spec.Last(dayKey(t, w, end), n)
	require.NoError(t, err)
	return keys
}

// seed fills days day0-6 .. day0 with 10 orders each, one snapshot a day.
func seed(t *testing.T, w *table.Writer) {
	for d := -6; d <= 0; d++ {
		replaceDay(t, w, day0.AddDate(0, 0, d), 10)
	}
}

func TestReplaceWindowLatePolicies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, late := range []table.LatePolicy{table.DropLate, table.RouteLate} {
		t.Run(late.String(), func(t *testing.T) {
			cat, ident, _ := ordersTable(t)
			w := open(t, cat, ident)
			seed(t, w)
			res, err := w.ReplaceWindow(ctx, window(t, w, day0, 3), late, reader(nightly()))
			require.NoError(t, err)

			want := []commit.PartitionResult{
				{Key: "event_date=2026-07-12", AddedFiles: 1, DeletedFiles: 1, AddedRows: 20, DeletedRows: 10},
				{Key: "event_date=2026-07-13", DeletedFiles: 1, DeletedRows: 10}, // no input rows: emptied
				{Key: "event_date=2026-07-14", AddedFiles: 1, DeletedFiles: 1, AddedRows: 30, DeletedRows: 10},
			}
			if !slices.Equal(res.PerPartition, want) {
				t.Errorf("ReplaceWindow(%s).PerPartition = %+v, want %+v", late, res.PerPartition, want)
			}
			wantLate := map[string]int64{"event_date=2026-07-09": 2, "event_date=2026-07-08": 1}
			if res.LateRows != 3 || !mapsEqual(res.LateByPartition, wantLate) {
				t.Errorf("ReplaceWindow(%s) late = %d %v, want 3 %v", late, res.LateRows, res.LateByPartition, wantLate)
			}
			require.Equal(t, int64(50), res.AddedRows)
			require.Equal(t, int64(30), res.DeletedRows)

			scan := string(catalogtest.CanonicalScan(t, cat, ident))
			require.Equal(t, 10*4+50, strings.Count(scan, "\n"), "rows: 4 untouched days of 10, 50 new")

			lateIdent := table.LateTable(ident)
			if late == table.DropLate {
				require.Empty(t, res.LateTable)
				_, err := cat.LoadTable(ctx, lateIdent)
				require.Error(t, err, "drop must not create the late table")
				return
			}
			require.Equal(t, "db.fact_orders_late", res.LateTable)
			first := catalogtest.CanonicalScan(t, cat, lateIdent)
			require.Equal(t, 3, strings.Count(string(first), "\n"))
			require.Contains(t, string(first), "|"+w.RunID()+"|event_date=2026-07-09|event_date=2026-07-14|"+table.ReasonOutsideWindow+"\n")

			// The same nightly run again, by another run: no duplicate in
			// the late table, the window unchanged.
			w2 := open(t, cat, ident, table.WithRunID("rerun"))
			res2, err := w2.ReplaceWindow(ctx, window(t, w2, day0, 3), late, reader(nightly()))
			require.NoError(t, err)
			require.True(t, res2.Unchanged, "second identical window run: Unchanged")
			second := catalogtest.CanonicalScan(t, cat, lateIdent)
			require.Equal(t, strings.ReplaceAll(string(first), w.RunID(), "rerun"), string(second))
			require.Equal(t, scan, string(catalogtest.CanonicalScan(t, cat, ident)))

			// A later night without late rows leaves the earlier night's
			// late rows alone; the same night without them empties its own.
			_, err = w2.ReplaceWindow(ctx, window(t, w2, day0.AddDate(0, 0, 1), 3), late, reader(orderdata.Day(day0.AddDate(0, 0, 1), 5)))
			require.NoError(t, err)
			require.Equal(t, 3, strings.Count(string(catalogtest.CanonicalScan(t, cat, lateIdent)), "\n"))
			_, err = w2.ReplaceWindow(ctx, window(t, w2, day0, 3), late, reader(orderdata.Day(day0, 30)))
			require.NoError(t, err)
			require.Empty(t, catalogtest.CanonicalScan(t, cat, lateIdent))
		})
	}
}

func TestReplaceWindowReject(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	seed(t, w)
	before, files, snaps := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir), catalogtest.Snapshots(t, cat, ident)
	_, err := w.ReplaceWindow(context.Background(), window(t, w, day0, 3), table.RejectLate, reader(nightly()))
	if !errors.Is(err, table.ErrLateRows) {
		t.Fatalf("ReplaceWindow(reject, late rows) = %v, want %v", err, table.ErrLateRows)
	}
	require.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
	require.Equal(t, files, catalogtest.DataFiles(t, dir), "staged files removed")
	require.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident))

	// Without late rows, reject commits.
	res, err := w.ReplaceWindow(context.Background(), window(t, w, day0, 3), table.RejectLate, reader(orderdata.Day(day0, 3)))
	require.NoError(t, err)
	require.Zero(t, res.LateRows)
	require.Len(t, res.PerPartition, 3)
}

// TestReplaceWindowUnchanged: reprocessing a window where one partition
// changed rewrites that partition only.
func TestReplaceWindowUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	in := nightly()[:50]
	_, err := w.ReplaceWindow(ctx, window(t, w, day0, 3), table.RejectLate, reader(in))
	require.NoError(t, err)
	snaps := catalogtest.Snapshots(t, cat, ident)

	res, err := w.ReplaceWindow(ctx, window(t, w, day0, 3), table.RejectLate, reader(in))
	require.NoError(t, err)
	require.True(t, res.Unchanged)
	require.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "no snapshot for an unchanged window")

	in = append(in, orderdata.At(day0.AddDate(0, 0, -1), 0, 1)) // a late order of day0-1 arrived
	res, err = w.ReplaceWindow(ctx, window(t, w, day0, 3), table.RejectLate, reader(in))
	require.NoError(t, err)
	require.False(t, res.Unchanged)
	got := make(map[string]bool)
	for _, p := range res.PerPartition {
		got[p.Key] = p.Unchanged
	}
	want := map[string]bool{"event_date=2026-07-12": true, "event_date=2026-07-13": false, "event_date=2026-07-14": true}
	if !mapsEqual(got, want) {
		t.Errorf("ReplaceWindow(one changed).PerPartition unchanged = %v, want %v", got, want)
	}
	require.Equal(t, 1, res.AddedFiles)
	require.Equal(t, 0, res.DeletedFiles)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Equal(t, "event_date=2026-07-13", tbl.CurrentSnapshot().Summary.Properties[commit.SummaryPartitions])
}

func TestReplaceWindowBad(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	k := dayKey(t, w, day0)
	tests := []struct {
		name   string
		window []partition.Key
		late   table.LatePolicy
		want   error
	}{
		{"empty window", nil, table.DropLate, table.ErrBadWindow},
		{"twice", []partition.Key{k, k}, table.DropLate, table.ErrBadWindow},
		{"zero key", []partition.Key{{}}, table.DropLate, table.ErrBadWindow},
		{"no policy", []partition.Key{k}, 0, table.ErrBadWindow},
	}
	for _, tc := range tests {
		_, err := w.ReplaceWindow(context.Background(), tc.window, tc.late, reader(nil))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: ReplaceWindow(%v, %v) = %v, want %v", tc.name, tc.window, tc.late, err, tc.want)
		}
	}
	if _, err := w.ReplaceWindow(context.Background(), []partition.Key{k}, table.DropLate, nil); !errors.Is(err, table.ErrNilInput) {
		t.Errorf("ReplaceWindow(nil rows) = %v, want %v", err, table.ErrNilInput)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// A nightly run with a 3-day lookback: the window's three partitions are
// replaced in one snapshot (the 13th, without input rows, is emptied), and
// the order 5 days late goes to fact_orders_late.
func ExampleWriter_ReplaceWindow() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-example-")
	defer os.RemoveAll(dir)
	cat, ident, err := orderdata.Open(ctx, dir) // the embedded default catalog
	if err != nil {
		panic(err)
	}
	w, err := table.Open(ctx, cat, ident)
	if err != nil {
		panic(err)
	}
	end, err := w.Key("event_date=2026-07-14") // the run's parameter, never the clock
	if err != nil {
		panic(err)
	}
	spec, err := partition.NewSpec(w.Table().Spec(), w.Table().Schema())
	if err != nil {
		panic(err)
	}
	window, err := spec.Last(end, 3)
	if err != nil {
		panic(err)
	}
	d := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	in := append(orderdata.Day(d, 10), orderdata.Day(d.AddDate(0, 0, -2), 4)...)
	in = append(in, orderdata.At(d.AddDate(0, 0, -5), 0, 1))
	rows := orderdata.Reader(in, 8)
	defer rows.Release()
	res, err := w.ReplaceWindow(ctx, window, table.RouteLate, rows)
	if err != nil {
		panic(err)
	}
	for _, p := range res.PerPartition {
		fmt.Println(p.Key, "added", p.AddedRows)
	}
	fmt.Println("late", res.LateByPartition, "in", res.LateTable)
	// Output:
	// event_date=2026-07-12 added 4
	// event_date=2026-07-13 added 0
	// event_date=2026-07-14 added 10
	// late map[event_date=2026-07-09:1] in shop.fact_orders_late
}

// failing yields the batches of rdr, then fails after n of them.
type failing struct {
	array.RecordReader
	n   int
	err error
}

func (f *failing) Next() bool {
	if f.n == 0 {
		f.err = errors.New("input broke")
		return false
	}
	f.n--
	return f.RecordReader.Next()
}

func (f *failing) Err() error { return f.err }

// TestReplaceWindowRouteAbort: an input that fails after late rows were
// routed commits nothing, in either table, and leaves no new file.
func TestReplaceWindowRouteAbort(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	seed(t, w)
	before, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)
	in := append(orderdata.Day(day0.AddDate(0, 0, -5), 8), orderdata.Day(day0, 64)...) // late rows first
	rows := &failing{RecordReader: orderdata.Reader(in, 8), n: 4}
	defer rows.Release()
	_, err := w.ReplaceWindow(context.Background(), window(t, w, day0, 3), table.RouteLate, rows)
	if err == nil || !strings.Contains(err.Error(), "input broke") {
		t.Fatalf("ReplaceWindow(failing input) = %v, want the input's error", err)
	}
	require.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
	require.Empty(t, catalogtest.CanonicalScan(t, cat, table.LateTable(ident)), "late table created, nothing committed")
	require.Equal(t, files, catalogtest.DataFiles(t, dir))
}

// TestReplaceWindowSkipsOnlyWhatStillHolds: a window partition that holds
// the input already is left as it is, but only if it still does when the
// commit lands. Here another writer replaces that partition between the
// call's planning and its commit: the call must write it again, so that
// the whole window holds its input once it returns (the table equals one
// written by this call alone), and leave no file behind.
func TestReplaceWindowSkipsOnlyWhatStillHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, dir := ordersTable(t)
	in := nightly()[:50] // 20 orders of day0-2, 30 of day0
	w := open(t, cat, ident)
	_, err := w.ReplaceWindow(ctx, window(t, w, day0, 3), table.RejectLate, reader(in))
	require.NoError(t, err)

	other := open(t, cat, ident, table.WithCodeVersion("other"))
	raced := &catalogtest.Interposer{Catalog: cat, Before: func() {
		_, err := other.ReplacePartition(ctx, dayKey(t, other, day0), reader(orderdata.Day(day0, 7)))
		require.NoError(t, err)
	}}
	w = open(t, raced, ident)
	in2 := append(slices.Clone(in), orderdata.At(day0.AddDate(0, 0, -1), 0, 1)) // day0-1 changes, day0 holds
	res, err := w.ReplaceWindow(ctx, window(t, w, day0, 3), table.RejectLate, reader(in2))
	require.NoError(t, err)
	require.Nil(t, raced.Before, "the other writer ran")

	fresh, freshIdent, _ := ordersTable(t)
	fw := open(t, fresh, freshIdent)
	_, err = fw.ReplaceWindow(ctx, window(t, fw, day0, 3), table.RejectLate, reader(in2))
	require.NoError(t, err)
	require.Equal(t, string(catalogtest.CanonicalScan(t, fresh, freshIdent)), string(catalogtest.CanonicalScan(t, cat, ident)),
		"the window holds exactly its input, day0 included")
	for _, p := range res.PerPartition {
		if p.Key == "event_date=2026-07-14" {
			require.False(t, p.Unchanged, "day0 was written again")
		}
	}
	require.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left behind")
}
