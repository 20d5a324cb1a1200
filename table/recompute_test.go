package table_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

var revenueSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
	iceberg.NestedField{ID: 2, Name: "orders", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "revenue_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
)

var revenueSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}})

// dailyRevenue aggregates fact_orders rows of one day: one row with the
// day, the order count and the sum of amount_minor. No row for no orders.
func dailyRevenue(day arrow.Date32) table.AggregateFunc {
	return func(_ context.Context, src array.RecordReader) (array.RecordReader, error) {
		var n, sum int64
		for src.Next() {
			rec := src.RecordBatch()
			idx := rec.Schema().FieldIndices("amount_minor")
			if len(idx) != 1 {
				return nil, errors.New("no amount_minor column")
			}
			amounts := rec.Column(idx[0]).(*array.Int64)
			for i := 0; i < amounts.Len(); i++ {
				sum += amounts.Value(i)
			}
			n += rec.NumRows()
		}
		if err := src.Err(); err != nil {
			return nil, err
		}
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "event_date", Type: arrow.FixedWidthTypes.Date32},
			{Name: "orders", Type: arrow.PrimitiveTypes.Int64},
			{Name: "revenue_minor", Type: arrow.PrimitiveTypes.Int64},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		if n > 0 {
			b.Field(0).(*array.Date32Builder).Append(day)
			b.Field(1).(*array.Int64Builder).Append(n)
			b.Field(2).(*array.Int64Builder).Append(sum)
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	}
}

// recomputeDays recomputes the revenue of every partition key in keys
// ("event_date=..."), reading the source at its current snapshot.
func recomputeDays(t *testing.T, cat catalog.Catalog, src, dst icetable.Identifier, keys []string, snapshot int64) {
	t.Helper()
	ctx := context.Background()
	srcTbl, err := cat.LoadTable(ctx, src)
	require.NoError(t, err)
	w := open(t, cat, dst)
	for _, k := range keys {
		sk, err := partition.ParseKey(srcTbl.Spec(), srcTbl.Schema(), k)
		require.NoError(t, err)
		dk := key(t, w, k)
		spec, _ := partition.NewSpec(srcTbl.Spec(), srcTbl.Schema())
		vals, _ := spec.Values(sk)
		day := arrow.Date32(vals[1000].(iceberg.Date))
		_, err = w.Recompute(ctx, dk, table.Source{Table: srcTbl, Key: sk, SnapshotID: snapshot}, dailyRevenue(day))
		require.NoError(t, err)
	}
}

func TestRecomputeAfterLateRecordEqualsFromScratch(t *testing.T) {
	t.Parallel()
	cat, src, _ := ordersTable(t)
	dst := catalogtest.CreateTable(t, cat, "daily_revenue", revenueSchema, revenueSpec, nil)
	d1 := day0.AddDate(0, 0, 1)
	yesterday, today := orderdata.Day(day0, 100), orderdata.Day(d1, 80)
	late := yesterday[99]

	w := open(t, cat, src)
	res := upsert(t, w, yesterday[:99])
	recomputeDays(t, cat, src, dst, res.Partitions, 0)
	before := string(catalogtest.CanonicalScan(t, cat, dst))
	res = upsert(t, w, append(append([]orderdata.Order{}, today...), late, yesterday[5])) // the late order and a redelivery
	assert.Len(t, res.Partitions, 2, "partitions touched by today's batch with a late record")
	recomputeDays(t, cat, src, dst, res.Partitions, 0)
	recomputeDays(t, cat, src, dst, res.Partitions, 0) // a rerun of the rollup
	got := string(catalogtest.CanonicalScan(t, cat, dst))
	assert.NotEqual(t, before, got, "the late record must change yesterday's revenue")

	scratch, ssrc, _ := ordersTable(t)
	sdst := catalogtest.CreateTable(t, scratch, "daily_revenue", revenueSchema, revenueSpec, nil)
	sres := upsert(t, open(t, scratch, ssrc), append(yesterday, today...))
	recomputeDays(t, scratch, ssrc, sdst, sres.Partitions, 0)
	assert.Equal(t, string(catalogtest.CanonicalScan(t, scratch, sdst)), got, "rollup after a late record vs from scratch")
}

func TestRecomputeAtSnapshotIsRepeatable(t *testing.T) {
	t.Parallel()
	cat, src, _ := ordersTable(t)
	dst := catalogtest.CreateTable(t, cat, "daily_revenue", revenueSchema, revenueSpec, nil)
	w := open(t, cat, src)
	res := upsert(t, w, orderdata.Day(day0, 10))
	first := res.SnapshotID
	recomputeDays(t, cat, src, dst, res.Partitions, first)
	want := string(catalogtest.CanonicalScan(t, cat, dst))
	upsert(t, w, orderdata.Day(day0, 20)[10:]) // more orders land
	recomputeDays(t, cat, src, dst, res.Partitions, first)
	assert.Equal(t, want, string(catalogtest.CanonicalScan(t, cat, dst)), "Recompute at snapshot %d after more rows landed", first)
	recomputeDays(t, cat, src, dst, res.Partitions, 0)
	assert.NotEqual(t, want, string(catalogtest.CanonicalScan(t, cat, dst)), "Recompute at the current snapshot")

	srcTbl, _ := cat.LoadTable(context.Background(), src)
	aw := open(t, cat, dst)
	_, err := aw.Recompute(context.Background(), key(t, aw, res.Partitions[0]), table.Source{Table: srcTbl, SnapshotID: 12345}, dailyRevenue(0))
	assert.ErrorIs(t, err, table.ErrNoSource)
}
