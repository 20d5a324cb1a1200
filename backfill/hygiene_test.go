package backfill_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// TestManifestsBounded: icerun's own commits keep the manifests of a long
// run few, with no maintenance step, for first writes (appends) and
// replacements (overwrites) alike, in every order. Without their merging
// of small manifests every commit would leave one more.
func TestManifestsBounded(t *testing.T) {
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
			if rep.After.Manifests > commit.MergeSmallManifests {
				t.Errorf("%s, %s: manifests after %d commits = %d, want <= %d", name, v, n, rep.After.Manifests, commit.MergeSmallManifests)
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
