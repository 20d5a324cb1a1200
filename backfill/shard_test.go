package backfill_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// TestShardOf: the owner of a key depends on its text and n only, the
// shares are disjoint, cover every key and are balanced, and growing n
// moves only the keys the new shard takes.
func TestShardOf(t *testing.T) {
	_, _, w, _ := setup(t)
	all := keys(t, w, 400)

	// Pinned: workers of different builds and machines must agree.
	for _, tc := range []struct {
		key  string
		n    int
		want int
	}{
		{"event_date=2025-12-20", 4, 1},
		{"event_date=2026-01-01", 4, 2},
		{"event_date=2026-07-14", 8, 3},
		{"event_date=2026-07-14", 1, 0},
	} {
		k, err := w.Key(tc.key)
		require.NoError(t, err)
		require.Equal(t, tc.want, backfill.ShardOf(k, tc.n), "ShardOf(%s, %d)", tc.key, tc.n)
	}

	for _, n := range []int{2, 3, 4, 8, 16} {
		t.Run(fmt.Sprintf("%d shards", n), func(t *testing.T) {
			owner := map[partition.Key]int{}
			size := make([]int, n)
			for _, k := range all {
				s := backfill.ShardOf(k, n)
				require.True(t, s >= 0 && s < n, "shard %d of %d", s, n)
				owner[k] = s
				size[s]++
			}
			// Balanced as a random share is: every share within 4
			// standard deviations of the binomial mean (400 keys, 4 shards:
			// 100 ± 35; these keys give 79 to 116).
			mean := float64(len(all)) / float64(n)
			sd := math.Sqrt(mean * (1 - 1/float64(n)))
			for s, got := range size {
				if math.Abs(float64(got)-mean) > 4*sd {
					t.Errorf("shard %d of %d holds %d keys, mean %.0f ± %.1f: %v", s, n, got, mean, sd, size)
				}
			}
			// Stable under a longer range: the first 300 keys keep their owner.
			for _, k := range all[:300] {
				require.Equal(t, owner[k], backfill.ShardOf(k, n))
			}
			// Consistent: with n+1 shards a key stays or moves to shard n.
			for _, k := range all {
				if s := backfill.ShardOf(k, n+1); s != owner[k] && s != n {
					t.Errorf("%s moved from shard %d of %d to %d of %d", k, owner[k], n, s, n+1)
				}
			}
		})
	}
}

func TestWithShardBadValues(t *testing.T) {
	_, _, w, ks := setup(t)
	for _, tc := range []struct{ i, n int }{{0, 0}, {-1, 4}, {4, 4}, {5, 4}, {0, -2}} {
		_, err := backfill.Run(context.Background(), w, ks, orders, backfill.WithShard(tc.i, tc.n))
		if !errors.Is(err, backfill.ErrBadOption) {
			t.Errorf("WithShard(%d, %d): %v, want %v", tc.i, tc.n, err, backfill.ErrBadOption)
		}
	}
}

// TestShardedWorkers runs 4 workers, each with its own catalog handle and
// shard, 3 keys per snapshot; worker 1 is interrupted midway and started
// again. The table ends equal to one worker's run, every key written by
// exactly one snapshot of the shard that owns it, and a run with another
// shard count skips every key.
func TestShardedWorkers(t *testing.T) {
	ctx := context.Background()
	const n, perSnapshot = 4, 3
	want := func() []byte {
		cat, ident, w, ks := setup(t, table.WithCodeVersion("v1"))
		_, err := backfill.Run(ctx, w, ks, orders)
		require.NoError(t, err)
		return catalogtest.CanonicalScan(t, cat, ident)
	}()

	cat, ident, open := shared(t, table.WithCodeVersion("v1"))
	ks := keys(t, open(), days)

	var mu sync.Mutex
	calls := map[partition.Key]int{}
	counting := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		mu.Lock()
		calls[k]++
		mu.Unlock()
		return orders(ctx, k)
	}
	reports := make([]backfill.Report, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			job, wctx := backfill.Job(counting), ctx
			if i == 1 { // interrupted while its second group is read
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				var seen atomic.Int32
				job, wctx = func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
					if seen.Add(1) == perSnapshot+1 {
						cancel()
					}
					return counting(ctx, k)
				}, cctx
			}
			reports[i], errs[i] = backfill.Run(wctx, open(), ks, job, backfill.WithShard(i, n), backfill.WithKeysPerSnapshot(perSnapshot))
		})
	}
	wg.Wait()
	require.ErrorIs(t, errs[1], context.Canceled)
	interrupted := reports[1].Written
	require.Less(t, interrupted, reports[1].Total)
	reports[1], errs[1] = backfill.Run(ctx, open(), ks, counting, backfill.WithShard(1, n), backfill.WithKeysPerSnapshot(perSnapshot))
	require.Equal(t, interrupted, reports[1].Skipped, "the restarted worker skips what it committed before")

	total := 0
	for i, rep := range reports {
		require.NoError(t, errs[i], "worker %d", i)
		require.Zero(t, rep.Failed, "worker %d", i)
		total += rep.Total
		require.Equal(t, rep.Total, rep.Written+rep.Skipped, "worker %d: %+v", i, rep)
	}
	require.Equal(t, days, total, "the shares cover every key once")
	require.Equal(t, want, catalogtest.CanonicalScan(t, cat, ident))

	tbl, err := open().Refresh(ctx)
	require.NoError(t, err)
	for _, k := range ks {
		hist := table.History(tbl, k.String())
		require.Len(t, hist, 1, "%s: one write", k)
		require.LessOrEqual(t, calls[k], 2, "%s: its job ran at most once more after the interruption", k)
	}
	// The snapshots hold up to perSnapshot keys of one shard each.
	for _, s := range tbl.Metadata().Snapshots() {
		var owners []int
		for _, k := range ks {
			if slices.ContainsFunc(table.History(tbl, k.String()), func(h table.Write) bool { return h.SnapshotID == s.SnapshotID }) {
				owners = append(owners, backfill.ShardOf(k, n))
			}
		}
		require.LessOrEqual(t, len(owners), perSnapshot)
		require.Len(t, slices.Compact(owners), 1, "snapshot %d: keys of one shard", s.SnapshotID)
	}

	// Another shard count: every key is done by this code version, whoever wrote it.
	for i := range 3 {
		rep, err := backfill.Run(ctx, open(), ks, counting, backfill.WithShard(i, 3))
		require.NoError(t, err)
		require.Equal(t, rep.Total, rep.Skipped, "shard %d of 3", i)
		require.Zero(t, rep.Commits)
	}
}
