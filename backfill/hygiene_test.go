package backfill_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
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
