package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// TestRowLineageOldSpecRewriteKeepsRowIDs: on a v3 table whose spec
// evolved from identity(event_date) to (event_date, bucket[4](order_id)),
// replacing one bucket of the day rewrites the day's old-spec file
// without that bucket's rows. The rows carried over are moved, not
// changed: they keep their _row_id and _last_updated_sequence_number, as
// in a compaction; the bucket's new rows get new ids.
func TestRowLineageOldSpecRewriteKeepsRowIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "3"})
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 400)
	before, _, next := readLineage(t, cat, ident)

	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	require.NoError(t, txn.UpdateSpec(true).AddField("order_id", iceberg.BucketTransform{NumBuckets: 4}, "order_bucket").Commit())
	_, err = txn.Commit(ctx)
	require.NoError(t, err)

	bucket := iceberg.BucketTransform{NumBuckets: 4}.Transformer(iceberg.PrimitiveTypes.Int64)
	var one []orderdata.Order
	for _, o := range orderdata.Day(day0, 400) {
		if bucket(o.ID).Val == 1 {
			o.Amount++
			one = append(one, o)
		}
	}
	w = open(t, cat, ident)
	rows := reader(one)
	defer rows.Release()
	_, err = w.ReplacePartition(ctx, key(t, w, "event_date="+day0.Format("2006-01-02")+"/order_bucket=1"), rows)
	require.NoError(t, err)

	after, _, _ := readLineage(t, cat, ident)
	require.Len(t, after, 400)
	carried := 0
	for id, l := range after {
		if bucket(id).Val == 1 {
			assert.GreaterOrEqual(t, l.rowID, next, "order %d of the replaced bucket: want a new _row_id", id)
			continue
		}
		carried++
		assert.Equal(t, before[id], l, "order %d carried over by the rewrite of the old-spec file: want its lineage kept", id)
	}
	require.Greater(t, carried, 200, "rows carried over")
}
