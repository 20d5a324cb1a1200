package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// Spec identity(event_date) evolves to (event_date, bucket[4](order_id)).
// Writers replacing buckets of the same day each rewrite the day's
// old-spec file without their bucket's rows; a writer whose first attempt
// loses the race re-plans against the winner's files, and the rewrite of
// its first attempt is referenced by nothing. It must be removed.
func TestReplacePartitionRemovesRewritesOfLostAttempts(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	ctx := context.Background()
	orders := orderdata.Day(day0, 400)
	w := open(t, cat, ident)
	rows := reader(orders)
	_, err := w.ReplacePartition(ctx, dayKey(t, w, day0), rows)
	rows.Release()
	require.NoError(t, err)

	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	require.NoError(t, txn.UpdateSpec(true).AddField("order_id", iceberg.BucketTransform{NumBuckets: 4}, "order_bucket").Commit())
	_, err = txn.Commit(ctx)
	require.NoError(t, err)

	bucket := iceberg.BucketTransform{NumBuckets: 4}.Transformer(iceberg.PrimitiveTypes.Int64)
	byBucket := make(map[int32][]orderdata.Order)
	for _, o := range orders {
		b := bucket(o.ID).Val
		o.Amount++ // new content, so no replace is Unchanged
		byBucket[b] = append(byBucket[b], o)
	}
	replace := func(cat catalog.Catalog, b int32) {
		w := open(t, cat, ident)
		rows := reader(byBucket[b])
		defer rows.Release()
		k := key(t, w, "event_date="+day0.Format("2006-01-02")+"/order_bucket="+string(rune('0'+b)))
		_, err := w.ReplacePartition(ctx, k, rows)
		require.NoError(t, err)
	}
	// Bucket 1's first attempt loses to bucket 0, which loses to bucket 2.
	replace(&catalogtest.Interposer{Catalog: cat, Before: func() {
		replace(&catalogtest.Interposer{Catalog: cat, Before: func() { replace(cat, 2) }}, 0)
	}}, 1)

	assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "rewrites of lost attempts left behind")
	want := make([]orderdata.Order, 0, len(orders))
	for _, o := range orders {
		if b := bucket(o.ID).Val; b <= 2 {
			o.Amount++
		}
		want = append(want, o)
	}
	cat2, ident2, _ := ordersTable(t)
	w2 := open(t, cat2, ident2)
	rows = reader(want)
	defer rows.Release()
	_, err = w2.ReplacePartition(ctx, dayKey(t, w2, day0), rows)
	require.NoError(t, err)
	assert.Equal(t, string(catalogtest.CanonicalScan(t, cat2, ident2)), string(catalogtest.CanonicalScan(t, cat, ident)), "content")
}
