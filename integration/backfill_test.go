//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// TestBackfillExpiryKeepsLineage runs a backfill that expires snapshots
// during the run on every target: the lineage checkpoint is written to the
// target's storage and named by a table property through its catalog, a
// second run skips every key, a rewrite by a new code version leaves the
// same rows, and nothing is left for an orphan cleanup.
func TestBackfillExpiryKeepsLineage(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		ctx := context.Background()
		cat := e.catalog(t)
		ident := e.ordersTable(t, cat, "backfill_"+randomID())
		w, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v1"))
		require.NoError(t, err)
		first, err := w.Key("event_date=" + day0)
		require.NoError(t, err)
		last, err := w.Key("event_date=" + days(12)[11])
		require.NoError(t, err)
		tbl := w.Table()
		spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
		require.NoError(t, err)
		keys, err := spec.Range(first, last)
		require.NoError(t, err)
		job := func(_ context.Context, k partition.Key) (array.RecordReader, error) {
			d, err := time.Parse("event_date=2006-01-02", k.String())
			if err != nil {
				return nil, err
			}
			return orderdata.Reader(orderdata.Day(d, 30), 16), nil
		}
		h := backfill.Hygiene{KeepSnapshots: 2, PreviousVersionsMax: 2, ExpireRetainLast: 2}
		rep, err := backfill.Run(ctx, w, keys, job, backfill.WithHygiene(h), backfill.WithWorkers(2))
		require.NoError(t, err)
		require.Equal(t, 12, rep.Written)
		require.LessOrEqual(t, rep.After.Snapshots, 4)
		tbl, err = w.Refresh(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, tbl.Properties()[commit.PropertyLineage])
		want := scan(t, cat, ident)

		w2, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v1"))
		require.NoError(t, err)
		rep, err = backfill.Run(ctx, w2, keys, job, backfill.WithHygiene(h))
		require.NoError(t, err)
		require.Equal(t, 12, rep.Skipped, "lineage of expired snapshots read back from %s", e.Target)
		require.Equal(t, want, scan(t, cat, ident))
		require.Len(t, table.History(w2.Table(), keys[0].String()), 1)
		assertNoOrphans(t, e, ident)

		// A new code version rewrites every partition: the expiries free
		// the replaced data files too, and only those.
		w3, err := table.Open(ctx, cat, ident, table.WithCodeVersion("v2"))
		require.NoError(t, err)
		rep, err = backfill.Run(ctx, w3, keys, job, backfill.WithHygiene(h), backfill.WithWorkers(2))
		require.NoError(t, err)
		require.Equal(t, 12, rep.Written)
		require.Equal(t, want, scan(t, cat, ident))
		assertNoOrphans(t, e, ident)
	})
}
