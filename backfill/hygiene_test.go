package backfill_test

import (
	"context"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// TestManifestMerge records what iceberg-go v0.7.0 does with the table
// properties commit.manifest-merge.enabled and
// commit.manifest.min-count-to-merge (Hygiene.MergeManifestsAt): it merges
// the manifests of appends (a partition's first write) but not of
// overwrites (a partition replaced), so a recompute needs the runner's
// RewriteManifests (Hygiene.RewriteManifestsEvery) to stay bounded.
func TestManifestMerge(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name                string
		hygiene             backfill.Hygiene
		appends, overwrites func(n int) bool // the manifests after each round
	}{
		{"none", backfill.Hygiene{}, eq(12), gt(12)},
		{"merge", backfill.Hygiene{MergeManifestsAt: 4}, le(4), gt(4)},
		{"merge and rewrite", backfill.Hygiene{MergeManifestsAt: 4, RewriteManifestsEvery: 4}, le(4), le(4)},
	} {
		cat, _ := catalogtest.New(t)
		ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
		for i, v := range []string{"v1", "v2"} { // v2 replaces v1's partitions: overwrite snapshots
			w, err := table.Open(ctx, cat, ident, table.WithCodeVersion(v))
			require.NoError(t, err)
			rep, err := backfill.Run(ctx, w, keys(t, w, 12), orders, backfill.WithHygiene(tc.hygiene))
			require.NoError(t, err)
			require.Equal(t, 12, rep.Commits)
			if ok := []func(int) bool{tc.appends, tc.overwrites}[i]; !ok(rep.After.Manifests) {
				t.Errorf("%s: manifests after 12 %s = %d", tc.name, []string{"appends", "overwrites"}[i], rep.After.Manifests)
			}
			if tc.hygiene.MergeManifestsAt > 0 {
				props := w.Table().Properties()
				require.Equal(t, "true", props[icetable.ManifestMergeEnabledKey])
				require.Equal(t, "4", props[icetable.ManifestMinMergeCountKey])
			}
		}
	}
}

func eq(n int) func(int) bool { return func(m int) bool { return m == n } }
func le(n int) func(int) bool { return func(m int) bool { return m <= n } }
func gt(n int) func(int) bool { return func(m int) bool { return m > n } }
