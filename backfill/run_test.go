package backfill_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

var first = time.Date(2025, 12, 20, 0, 0, 0, 0, time.UTC) // the range crosses a year boundary

const days = 24

func setup(t *testing.T, opts ...table.Option) (catalog.Catalog, icetable.Identifier, *table.Writer, []partition.Key) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	w, err := table.Open(context.Background(), cat, ident, opts...)
	require.NoError(t, err)
	return cat, ident, w, keys(t, w, days)
}

// shared creates the fact_orders table; open opens a writer of it through
// a catalog handle of its own, as another process would.
func shared(t *testing.T, opts ...table.Option) (catalog.Catalog, icetable.Identifier, func() *table.Writer) {
	t.Helper()
	cat, dir := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	return cat, ident, func() *table.Writer {
		w, err := table.Open(context.Background(), catalogtest.Open(t, dir), ident, opts...)
		require.NoError(t, err)
		return w
	}
}

func keys(t *testing.T, w *table.Writer, n int) []partition.Key {
	t.Helper()
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	require.NoError(t, err)
	a, err := w.Key("event_date=" + first.Format(time.DateOnly))
	require.NoError(t, err)
	b, err := w.Key("event_date=" + first.AddDate(0, 0, n-1).Format(time.DateOnly))
	require.NoError(t, err)
	ks, err := spec.Range(a, b)
	require.NoError(t, err)
	return ks
}

// dayOf is the date of a key of the fact_orders spec.
func dayOf(k partition.Key) time.Time {
	d, err := time.Parse("event_date=2006-01-02", k.String())
	if err != nil {
		panic(err)
	}
	return d
}

// orders is the job: a function of the key only. Day i has 20+i orders.
func orders(_ context.Context, k partition.Key) (array.RecordReader, error) {
	d := dayOf(k)
	return orderdata.Reader(orderdata.Day(d, 20+d.YearDay()%7), 16), nil
}

func TestOrderAndWorkersGiveTheSameTable(t *testing.T) {
	ctx := context.Background()
	var want []byte
	type config struct {
		order   backfill.Order
		workers int
		k       int
	}
	configs := []config{
		{backfill.Forward, 1, 1}, {backfill.Reverse, 1, 1}, {backfill.Shuffled(7), 1, 1},
		{backfill.Forward, 4, 1}, {backfill.Reverse, 4, 1}, {backfill.Shuffled(7), 4, 1},
		{backfill.Shuffled(3), 4, 5},
	}
	if testing.Short() { // each order, each worker count and each group size once, against forward with 1 worker
		configs = []config{configs[0], configs[2], configs[4], configs[6]}
	}
	for _, tc := range configs {
		name := fmt.Sprintf("%v/%d workers/%d per snapshot", tc.order, tc.workers, tc.k)
		cat, ident, w, ks := setup(t)
		rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithOrder(tc.order), backfill.WithWorkers(tc.workers), backfill.WithKeysPerSnapshot(tc.k))
		require.NoError(t, err, name)
		require.Equal(t, days, rep.Written, name)
		require.Equal(t, (days+tc.k-1)/tc.k, rep.Commits, name)
		got := catalogtest.CanonicalScan(t, cat, ident)
		if want == nil {
			want = got
			require.NotEmpty(t, want)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: canonical scan differs from forward with 1 worker", name)
		}
	}
}

// TestResume cancels a run midway; a second run skips the keys the first
// one finished and ends equal to an uninterrupted run.
func TestResume(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t, table.WithCodeVersion("v1"))
	want := func() []byte {
		cat, ident, w, ks := setup(t, table.WithCodeVersion("v1"))
		_, err := backfill.Run(ctx, w, ks, orders)
		require.NoError(t, err)
		return catalogtest.CanonicalScan(t, cat, ident)
	}()

	cctx, cancel := context.WithCancel(ctx)
	var calls atomic.Int32
	interrupting := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		if calls.Add(1) == 10 {
			cancel() // the operator's ^C while key 10 is read
		}
		return orders(ctx, k)
	}
	rep, err := backfill.Run(cctx, w, ks, interrupting, backfill.WithWorkers(2))
	require.ErrorIs(t, err, context.Canceled)
	firstDone := rep.Written
	require.Greater(t, firstDone, 0)
	require.Less(t, firstDone, days)

	calls.Store(0)
	counting := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		calls.Add(1)
		return orders(ctx, k)
	}
	w2, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v1"))
	require.NoError(t, err)
	rep, err = backfill.Run(ctx, w2, ks, counting, backfill.WithOrder(backfill.Reverse))
	require.NoError(t, err)
	if rep.Skipped < firstDone || int(calls.Load()) != days-rep.Skipped {
		t.Errorf("second Run: skipped %d, jobs called %d; want >= %d skipped and %d calls", rep.Skipped, calls.Load(), firstDone, days-rep.Skipped)
	}
	require.Equal(t, want, catalogtest.CanonicalScan(t, cat, ident))

	// A new code version redoes every key; SkipDone compares code versions.
	w3, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v2"))
	require.NoError(t, err)
	rep, err = backfill.Run(ctx, w3, ks, orders)
	require.NoError(t, err)
	require.Zero(t, rep.Skipped)
	require.Equal(t, days, rep.Written, "same rows from a new code version: a new snapshot (lineage), same content")
	require.Equal(t, want, catalogtest.CanonicalScan(t, cat, ident))
}

func TestFailures(t *testing.T) {
	ctx := context.Background()
	errBoom := errors.New("upstream unavailable")
	bad := func(k partition.Key) bool { return dayOf(k).Day() == 25 }
	t.Run("transient failure is retried", func(t *testing.T) {
		_, _, w, ks := setup(t)
		var failed sync.Map
		job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
			if _, again := failed.LoadOrStore(k, true); !again && bad(k) {
				return nil, errBoom
			}
			return orders(ctx, k)
		}
		rep, err := backfill.Run(ctx, w, ks, job, backfill.WithRetries(1))
		require.NoError(t, err)
		require.Equal(t, days, rep.Written)
		require.Equal(t, 1, rep.Retries, "the 25th's job ran twice")
		require.Zero(t, rep.Conflicts, "one writer")
	})
	always := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		if bad(k) {
			return nil, errBoom
		}
		return orders(ctx, k)
	}
	t.Run("continue", func(t *testing.T) {
		_, _, w, ks := setup(t)
		rep, err := backfill.Run(ctx, w, ks, always, backfill.WithOnFailure(backfill.Continue), backfill.WithRetries(2), backfill.WithWorkers(3))
		require.ErrorIs(t, err, backfill.ErrKeysFailed)
		require.ErrorIs(t, err, errBoom)
		require.Len(t, rep.Failed, 1)
		require.Equal(t, 3, rep.Failed[0].Attempts)
		require.Equal(t, "event_date=2025-12-25", rep.Failed[0].Keys[0].String())
		require.Equal(t, days-1, rep.Written)
	})
	t.Run("stop", func(t *testing.T) {
		_, _, w, ks := setup(t)
		rep, err := backfill.Run(ctx, w, ks, always, backfill.WithRetries(0))
		require.ErrorIs(t, err, backfill.ErrKeysFailed)
		require.Equal(t, 5, rep.Written, "forward, 1 worker: the 5 days before the 25th")
	})
}

func TestProgress(t *testing.T) {
	_, _, w, ks := setup(t)
	tick := time.Unix(0, 0)
	clock := func() time.Time { tick = tick.Add(time.Second); return tick } // a fake clock: one second a read
	var got []backfill.Progress
	_, err := backfill.Run(context.Background(), w, ks, orders, backfill.WithClock(clock), backfill.WithProgress(func(p backfill.Progress) { got = append(got, p) }))
	require.NoError(t, err)
	require.Len(t, got, days)
	for i, p := range got {
		if p.Done != i+1 || p.Total != days || p.Elapsed != time.Duration(i+1)*time.Second {
			t.Errorf("progress %d = %+v, want done %d of %d after %ds", i, p, i+1, days, i+1)
		}
	}
	last := got[days-1]
	require.Zero(t, last.ETA)
	require.Equal(t, got[0].ETA, time.Duration(days-1)*time.Second)
	require.InDelta(t, float64(last.Rows)/float64(days), last.RowsPerSec, 1e-9)
}

// TestJobGetsTheKey: the runner passes every key to the job, once, and
// nothing else: the job's only parameter.
func TestJobGetsTheKey(t *testing.T) {
	_, _, w, ks := setup(t)
	var mu sync.Mutex
	seen := map[partition.Key]int{}
	job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		mu.Lock()
		seen[k]++
		mu.Unlock()
		return orders(ctx, k)
	}
	_, err := backfill.Run(context.Background(), w, ks, job, backfill.WithWorkers(4), backfill.WithOrder(backfill.Shuffled(1)))
	require.NoError(t, err)
	require.Len(t, seen, days)
	for _, k := range ks {
		require.Equal(t, 1, seen[k], k.String())
	}
}

func TestHygiene(t *testing.T) {
	ctx := context.Background()
	t.Run("none", func(t *testing.T) {
		_, _, w, ks := setup(t)
		rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithHygiene(backfill.Hygiene{}))
		require.NoError(t, err)
		require.LessOrEqual(t, rep.After.Manifests, snapshotcommit.MergeSmallManifests, "icerun's commits merge small manifests")
		require.Equal(t, days+1, rep.After.MetadataJSON, "every metadata.json kept without hygiene")
	})
	t.Run("default", func(t *testing.T) {
		_, _, w, ks := setup(t)
		rep, err := backfill.Run(ctx, w, ks, orders)
		require.NoError(t, err)
		require.LessOrEqual(t, rep.After.MetadataJSON, backfill.DefaultHygiene.PreviousVersionsMax+1)
		require.Equal(t, 0, rep.Before.Manifests)
	})
	t.Run("expire", func(t *testing.T) {
		cat, ident, w, ks := setup(t)
		want := func() []byte {
			cat, ident, w, ks := setup(t)
			_, err := backfill.Run(ctx, w, ks, orders)
			require.NoError(t, err)
			return catalogtest.CanonicalScan(t, cat, ident)
		}()
		rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithHygiene(backfill.Hygiene{PreviousVersionsMax: 2, ExpireRetainLast: 3}))
		require.NoError(t, err)
		require.Equal(t, 3, rep.After.Snapshots)
		require.Equal(t, want, catalogtest.CanonicalScan(t, cat, ident), "expiry keeps the current content")
	})
}

func TestBadOptions(t *testing.T) {
	_, _, w, ks := setup(t)
	for _, o := range []backfill.Option{
		backfill.WithWorkers(0), backfill.WithKeysPerSnapshot(0), backfill.WithRetries(-1),
		backfill.WithOnFailure(0), backfill.WithResume(0), backfill.WithOrder(backfill.Order{}),
		backfill.WithHygiene(backfill.Hygiene{PreviousVersionsMax: -1}),
		backfill.WithHygiene(backfill.Hygiene{ExpireOlderThan: time.Hour}),
	} {
		if _, err := backfill.Run(context.Background(), w, ks, orders, o); !errors.Is(err, backfill.ErrBadOption) {
			t.Errorf("Run(bad option) = %v, want %v", err, backfill.ErrBadOption)
		}
	}
}

// TestRowOutsideItsJobsKey: a job that returns a row of another key fails,
// in a group of one and in a group of several keys alike, and nothing of
// that group is committed.
func TestRowOutsideItsJobsKey(t *testing.T) {
	for _, perSnapshot := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d keys per snapshot", perSnapshot), func(t *testing.T) {
			cat, ident, w, ks := setup(t)
			// The job of each key returns its day plus one row of the next day:
			// a key of the same group when several keys share a snapshot.
			stray := func(_ context.Context, k partition.Key) (array.RecordReader, error) {
				d := dayOf(k)
				return orderdata.Reader(append(orderdata.Day(d, 5), orderdata.Day(d.AddDate(0, 0, 1), 1)...), 16), nil
			}
			_, err := backfill.Run(context.Background(), w, ks[:4], stray, backfill.WithKeysPerSnapshot(perSnapshot), backfill.WithRetries(0))
			require.ErrorIs(t, err, partition.ErrRowOutside)
			require.Empty(t, catalogtest.CanonicalScan(t, cat, ident), "nothing may be committed")
		})
	}
}

// TestConflictsCounted: while the runner reads a key's rows, another
// writer commits; the runner's commit loses the race, is re-planned, and
// the report counts the conflict (not a retry: the job ran once).
func TestConflictsCounted(t *testing.T) {
	ctx := context.Background()
	_, _, open := shared(t)
	w, other := open(), open()
	ks := keys(t, w, 3)
	racing := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		rows, err := orders(ctx, k)
		if err != nil || k != ks[1] {
			return rows, err
		}
		return &commitsFirst{RecordReader: rows, commit: func() error {
			in, _ := orders(ctx, ks[2])
			defer in.Release()
			_, err := other.ReplacePartition(ctx, ks[2], in)
			return err
		}}, nil
	}
	rep, err := backfill.Run(ctx, w, ks[:2], racing)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Written)
	require.Equal(t, 1, rep.Conflicts)
	require.Zero(t, rep.Retries)
}

// commitsFirst runs commit (another writer's) before its first batch.
type commitsFirst struct {
	array.RecordReader
	commit func() error
	err    error
}

func (r *commitsFirst) Next() bool {
	if r.commit != nil {
		r.err, r.commit = r.commit(), nil
	}
	return r.err == nil && r.RecordReader.Next()
}

func (r *commitsFirst) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}
