package backfill_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// TestManifestsBounded: icerun's own commits keep the manifests of a long
// run few, with no maintenance step, for first writes (appends) and
// replacements (overwrites) alike, in every order. Without their merging
// of small manifests every commit would leave one more.
func TestManifestsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a long backfill: not in -short")
	}
	ctx := context.Background()
	const n = 40
	for name, order := range map[string]backfill.Order{"forward": backfill.Forward, "reverse": backfill.Reverse, "shuffled": backfill.Shuffled(3)} {
		cat, _ := catalogtest.New(t)
		ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
		for _, v := range []string{"v1", "v2"} { // v2 replaces v1's partitions: overwrite snapshots
			w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(v))
			require.NoError(t, err)
			rep, err := backfill.Run(ctx, w, keys(t, w, n), orders, backfill.WithOrder(order), backfill.WithHygiene(backfill.Hygiene{}))
			require.NoError(t, err)
			require.Equal(t, n, rep.Commits)
			if rep.After.Manifests > snapshotcommit.MergeSmallManifests {
				t.Errorf("%s, %s: manifests after %d commits = %d, want <= %d", name, v, n, rep.After.Manifests, snapshotcommit.MergeSmallManifests)
			}
		}
	}
}

// TestLineageSurvivesExpiry: with snapshots expired during the run
// (KeepSnapshots) and after it (ExpireRetainLast), the table keeps few
// snapshots, yet the lineage of every key survives in the checkpoint the
// expiries leave: a second run skips every key, history still names the
// run and code version of a key written by an expired snapshot, and a
// replace with the same input is Unchanged. Without the checkpoint the
// second run would write every key again.
func TestLineageSurvivesExpiry(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		h    backfill.Hygiene
		max  int // snapshots at the end
	}{
		{"during the run", backfill.Hygiene{KeepSnapshots: 3}, 6},
		{"after the run", backfill.Hygiene{ExpireRetainLast: 2}, 2},
		{"both, two workers", backfill.Hygiene{KeepSnapshots: 3, ExpireRetainLast: 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, ident, w, ks := setup(t, table.WithCodeVersion("v1"), table.WithRunID("run-1"))
			rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithHygiene(tc.h), backfill.WithWorkers(2))
			require.NoError(t, err)
			require.Equal(t, days, rep.Written)
			require.LessOrEqual(t, rep.After.Snapshots, tc.max)
			tbl, err := w.Refresh(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, tbl.Properties()[commit.PropertyLineage], "expiry leaves a lineage checkpoint")
			scan := catalogtest.CanonicalScan(t, cat, ident)
			lineage, err := filepath.Glob(filepath.Join(strings.TrimPrefix(tbl.Location(), "file://"), "_icerun", "lineage-*.json"))
			require.NoError(t, err)
			require.Len(t, lineage, 1, "each expiry replaces the previous checkpoint file")

			// An orphan cleanup keeps the checkpoint: the property names it.
			_, err = cleanup.Orphans(ctx, tbl, cleanup.AnyAge(), cleanup.Execute())
			require.NoError(t, err)
			require.FileExists(t, lineage[0])

			hist := table.History(tbl, ks[0].String())
			require.Len(t, hist, 1, "the first key was written by an expired snapshot")
			require.Equal(t, "v1", hist[0].CodeVersion)
			require.Equal(t, "run-1", hist[0].RunID)
			require.Nil(t, tbl.Metadata().SnapshotByID(hist[0].SnapshotID), "its snapshot is expired")

			w2, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v1"), table.WithRunID("run-2"))
			require.NoError(t, err)
			rep, err = backfill.Run(ctx, w2, ks, orders, backfill.WithHygiene(tc.h))
			require.NoError(t, err)
			require.Equal(t, days, rep.Skipped, "a second run skips every key")
			require.Zero(t, rep.Commits)

			rdr, err := orders(ctx, ks[0])
			require.NoError(t, err)
			defer rdr.Release()
			res, err := w2.ReplacePartition(ctx, ks[0], rdr)
			require.NoError(t, err)
			require.True(t, res.Unchanged, "same input, same code version: unchanged after expiry")
			require.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident))
		})
	}
}

// TestExpiryFreesExactlyTheDeadFiles: a v1 backfill, then a v2 one that
// replaces every partition, both expiring snapshots during the run. The
// expiries remove what only expired snapshots referenced (replaced data
// files, merged-away manifests, manifest lists) and nothing live: the table
// equals a clean v2 load and an any-age orphan cleanup finds nothing. On a
// linear history icerun's incremental cleanup runs; a tag makes the
// history non-linear and iceberg-go's full cleanup runs instead.
func TestExpiryFreesExactlyTheDeadFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("a long backfill: not in -short")
	}
	ctx := context.Background()
	v2orders := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		d := dayOf(k)
		return orderdata.Reader(orderdata.Day(d, 11+d.YearDay()%5), 16), nil
	}
	want := func() []byte {
		cat, ident, w, ks := setup(t, table.WithCodeVersion("v2"))
		_, err := backfill.Run(ctx, w, ks, v2orders)
		require.NoError(t, err)
		return catalogtest.CanonicalScan(t, cat, ident)
	}()
	for _, tagged := range []bool{false, true} {
		cat, ident, w, ks := setup(t, table.WithCodeVersion("v1"))
		h := backfill.WithHygiene(backfill.Hygiene{KeepSnapshots: 2})
		_, err := backfill.Run(ctx, w, ks, orders, h, backfill.WithWorkers(2))
		require.NoError(t, err)
		if tagged {
			tbl, err := w.Refresh(ctx)
			require.NoError(t, err)
			_, _, err = cat.CommitTable(ctx, ident, nil, []icetable.Update{
				icetable.NewSetSnapshotRefUpdate("v1-done", tbl.CurrentSnapshot().SnapshotID, icetable.TagRef, -1, -1, -1)})
			require.NoError(t, err)
		}
		w2, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v2"))
		require.NoError(t, err)
		rep, err := backfill.Run(ctx, w2, ks, v2orders, h, backfill.WithWorkers(2))
		require.NoError(t, err)
		require.Equal(t, days, rep.Written)
		require.Equal(t, string(want), string(catalogtest.CanonicalScan(t, cat, ident)), "tagged=%v: expiry removed a live file", tagged)
		tbl, err := w2.Refresh(ctx)
		require.NoError(t, err)
		orphans, err := cleanup.Orphans(ctx, tbl, cleanup.AnyAge())
		require.NoError(t, err)
		var left []string
		for _, f := range orphans.Orphans {
			if !strings.HasSuffix(f.Path, ".metadata.json") { // old metadata versions: not expiry's business
				left = append(left, f.Path)
			}
		}
		require.Empty(t, left, "tagged=%v: files only expired snapshots referenced were left", tagged)
	}
}

// gateLock is a commit.Locker that holds every caller until open is
// closed; asked is closed at the first call.
type gateLock struct {
	asked, open chan struct{}
	once        sync.Once
}

func (g *gateLock) Lock(ctx context.Context, _ icetable.Identifier) (func(), error) {
	g.once.Do(func() { close(g.asked) })
	select {
	case <-g.open:
		return func() {}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestHygieneTakesTheCommitLock: a run's maintenance commits (here the
// metadata pruning properties, set after the first replacement) take the
// writer's commit lock as its replacements do, so that they wait their
// turn instead of racing the writers that share the lock.
func TestHygieneTakesTheCommitLock(t *testing.T) {
	ctx := context.Background()
	gate := &gateLock{asked: make(chan struct{}), open: make(chan struct{})}
	cat, ident, w, ks := setup(t, table.WithCommitLock(gate))
	done := make(chan error, 1)
	go func() {
		_, err := backfill.Run(ctx, w, ks[:2], orders)
		done <- err
	}()
	select {
	case <-gate.asked:
	case err := <-done:
		t.Fatalf("the run ended without asking for the lock: %v", err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Empty(t, tbl.Properties()[icetable.MetadataDeleteAfterCommitEnabledKey], "nothing is committed before the lock is granted")
	close(gate.open)
	require.NoError(t, <-done)
	tbl, err = cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Equal(t, "true", tbl.Properties()[icetable.MetadataDeleteAfterCommitEnabledKey])
}

// TestKeepSnapshotsBesideTheWorkers: snapshots expired during a run with
// 4 workers committing in a loop. The expiry takes the writer's commit
// turn, so it never races the run's own workers (it used to lose such
// races until its attempts ran out and the run failed, or kept failing
// while the metadata grew): no commit of the run is refused, the run
// succeeds and the table keeps few snapshots.
func TestKeepSnapshotsBesideTheWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("a long backfill: not in -short")
	}
	ctx := context.Background()
	for round := range 3 {
		cat, ident, _, _ := setup(t)
		counting := &refusals{Catalog: cat}
		w, err := table.Open(ctx, counting, ident)
		require.NoError(t, err)
		const keep = 1
		_, err = backfill.Run(ctx, w, keys(t, w, days), orders, backfill.WithWorkers(4),
			backfill.WithHygiene(backfill.Hygiene{KeepSnapshots: keep}))
		require.NoError(t, err, "round %d", round)
		require.Zero(t, counting.refused.Load(), "round %d: commits refused by the catalog", round)
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		require.LessOrEqual(t, len(tbl.Metadata().Snapshots()), 2*keep+4, "round %d: snapshots left", round)
	}
}

// TestExpireLosingEveryRaceIsErrConflict: an expiry whose every attempt
// another writer's commit beats (a table written in a loop, optimistic
// commits) gives up after its attempts with an error that matches
// commit.ErrConflict, and leaves the table's snapshots as they were.
func TestExpireLosingEveryRaceIsErrConflict(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t)
	_, err := backfill.Run(ctx, w, ks[:3], orders)
	require.NoError(t, err)
	races := 0
	raced := &refusals{Catalog: cat, before: func() {
		races++ // a new code version each time: the replacement is never Unchanged
		other, err := table.Open(ctx, cat, ident, table.WithCodeVersion(fmt.Sprint(races)))
		require.NoError(t, err)
		rows, err := orders(ctx, ks[0])
		require.NoError(t, err)
		_, err = other.ReplacePartition(ctx, ks[0], rows)
		require.NoError(t, err)
	}}
	maint, err := table.Open(ctx, raced, ident)
	require.NoError(t, err)
	err = backfill.Expire(ctx, maint, 1, 0)
	require.ErrorIs(t, err, commit.ErrConflict)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Len(t, tbl.Metadata().Snapshots(), 3+races, "nothing expired")
	require.Positive(t, races)
}

// refusals is a catalog that counts the commits it refuses; the tables it
// loads commit through it. before, when set, runs before every commit.
type refusals struct {
	catalog.Catalog
	refused atomic.Int64
	before  func()
}

func (c *refusals) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func (c *refusals) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.before != nil {
		c.before()
	}
	md, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, ups)
	if err != nil {
		c.refused.Add(1)
	}
	return md, loc, err
}

// TestHygieneOnlyWhenSomethingLands: a run whose keys all turn out
// unchanged (here RedoAll over a table that holds their rows) makes no
// commit at all: not even the metadata pruning properties are set.
func TestHygieneOnlyWhenSomethingLands(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t)
	_, err := backfill.Run(ctx, w, ks[:3], orders, backfill.WithHygiene(backfill.Hygiene{}))
	require.NoError(t, err)
	before := catalogtest.Snapshots(t, cat, ident)
	rep, err := backfill.Run(ctx, w, ks[:3], orders, backfill.WithResume(backfill.RedoAll))
	require.NoError(t, err)
	require.Equal(t, 3, rep.Unchanged)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Empty(t, tbl.Properties()[icetable.MetadataDeleteAfterCommitEnabledKey], "a run where nothing landed sets no property")
	require.Equal(t, before, catalogtest.Snapshots(t, cat, ident))

	rep, err = backfill.Run(ctx, w, ks[:4], orders, backfill.WithResume(backfill.RedoAll))
	require.NoError(t, err)
	require.Equal(t, 1, rep.Written)
	tbl, err = cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Equal(t, "true", tbl.Properties()[icetable.MetadataDeleteAfterCommitEnabledKey], "set once a key landed")
}
