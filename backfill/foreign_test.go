package backfill_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
)

// TestUnsupportedSpecIsNotRetried: another engine changes the table's spec
// to one icerun cannot partition by (year of a string column) during a
// backfill; each group fails with partition.ErrUnsupportedSpec at once,
// without retries, and nothing is committed.
func TestUnsupportedSpecIsNotRetried(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t)
	// UpdateSpec refuses such a spec; the catalog takes it as another
	// engine's commit.
	spec := iceberg.NewPartitionSpecID(1,
		iceberg.PartitionField{SourceIDs: []int{6}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1001, Name: "currency_year", Transform: iceberg.YearTransform{}})
	_, _, err := cat.CommitTable(ctx, ident, nil, []icetable.Update{icetable.NewAddPartitionSpecUpdate(&spec, false), icetable.NewSetDefaultSpecUpdate(1)})
	if err != nil {
		catalogtest.Refused(t, "the catalog refuses the spec: %v", err)
	}
	rep, err := backfill.Run(ctx, w, ks[:2], orders, backfill.WithRetries(3), backfill.WithWorkers(1))
	require.ErrorIs(t, err, backfill.ErrKeysFailed)
	require.ErrorIs(t, err, partition.ErrUnsupportedSpec)
	require.Len(t, rep.Failed, 1)
	require.Equal(t, 1, rep.Failed[0].Attempts, "a table icerun cannot write is not retried")
	require.Zero(t, catalogtest.Snapshots(t, cat, ident))
}
