package table_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// replacedWith is the content of a fresh table of format whose day0 holds
// orders.
func replacedWith(t *testing.T, format string, orders []orderdata.Order) string {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": format})
	w := open(t, cat, ident)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orders))
	require.NoError(t, err)
	return string(catalogtest.CanonicalScan(t, cat, ident))
}

func TestDeleteByKey(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			all := orderdata.Day(day0, 100)
			gone := slices.Concat(all[10:20], all[90:95])
			res, err := w.Delete(ctx, dayKey(t, w, day0), reader(gone), "order_id")
			require.NoError(t, err)
			assert.Equal(t, int64(15), res.DeletedRows, "Delete(15 keys).DeletedRows")
			assert.Equal(t, icetable.OpDelete, summary(t, cat, ident).Operation, "operation of a delete's snapshot")
			want := slices.Concat(all[:10], all[20:90], all[95:])
			assert.Equal(t, replacedWith(t, format, want), string(catalogtest.CanonicalScan(t, cat, ident)), "table after Delete(15 keys)")

			snaps := catalogtest.Snapshots(t, cat, ident)
			res, err = w.Delete(ctx, dayKey(t, w, day0), reader(gone), "order_id")
			require.NoError(t, err)
			assert.True(t, res.Unchanged, "Delete(same keys again).Unchanged = false, want true")
			res, err = w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0.AddDate(0, 0, 1), 5)), "order_id")
			require.NoError(t, err)
			assert.True(t, res.Unchanged, "Delete(keys not in the table).Unchanged = false, want true")
			assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "deletes that match no live row must not make a snapshot")

			// More deletes of the same data file: one vector per file on v3.
			_, err = w.Delete(ctx, dayKey(t, w, day0), reader(all[30:40]), "order_id")
			require.NoError(t, err)
			for _, task := range liveTasks(t, cat, ident) {
				assert.LessOrEqual(t, len(task.DeletionVectorFiles), 1, "deletion vectors of %s", task.File.FilePath())
			}
			want = slices.Concat(all[:10], all[20:30], all[40:90], all[95:])
			assert.Equal(t, replacedWith(t, format, want), string(catalogtest.CanonicalScan(t, cat, ident)), "table after a second Delete")
		})
	}
}

func TestDeleteWhere(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			res, err := w.DeleteWhere(ctx, dayKey(t, w, day0), iceberg.LessThan(iceberg.Reference("amount_minor"), int64(130)))
			require.NoError(t, err)
			assert.Equal(t, int64(30), res.DeletedRows, "DeleteWhere(amount_minor < 130).DeletedRows")
			var want []orderdata.Order
			for _, o := range orderdata.Day(day0, 100) {
				if o.Amount >= 130 {
					want = append(want, o)
				}
			}
			assert.Equal(t, replacedWith(t, format, want), string(catalogtest.CanonicalScan(t, cat, ident)), "table after DeleteWhere")

			res, err = w.DeleteWhere(ctx, dayKey(t, w, day0), iceberg.LessThan(iceberg.Reference("amount_minor"), int64(130)))
			require.NoError(t, err)
			assert.True(t, res.Unchanged, "DeleteWhere(same filter again).Unchanged")

			_, err = w.DeleteWhere(ctx, dayKey(t, w, day0), iceberg.EqualTo(iceberg.Reference("no_such_column"), int64(1)))
			assert.ErrorIs(t, err, table.ErrBadFilter, "DeleteWhere(unknown column)")
		})
	}
}

func TestDeleteRefusesFormatV1(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "1"})
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 10)
	snaps := catalogtest.Snapshots(t, cat, ident)
	_, err := w.Delete(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 2)), "order_id")
	assert.ErrorIs(t, err, commit.ErrUnsupported, "Delete on a format v1 table")
	assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "a refused delete must not make a snapshot")
}

func TestMergeOnReadUnpartitioned(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, *iceberg.UnpartitionedSpec,
				iceberg.Properties{"format-version": format, table.PropertyMergeMode: table.ModeMergeOnRead})
			w := open(t, cat, ident)
			all := orderdata.Day(day0, 50)
			upsert(t, w, all)
			changed := changedOrders(40, 60, 5_000)
			upsert(t, w, changed)
			_, err := w.Delete(ctx, key(t, w, ""), reader(all[:3]), "order_id")
			require.NoError(t, err)
			want := slices.Concat(all[3:40], changed)
			assert.Equal(t, replacedUnpartitioned(t, format, want), string(catalogtest.CanonicalScan(t, cat, ident)), "unpartitioned table after upserts and a delete")
		})
	}
}

func replacedUnpartitioned(t *testing.T, format string, orders []orderdata.Order) string {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, *iceberg.UnpartitionedSpec, iceberg.Properties{"format-version": format})
	upsert(t, open(t, cat, ident), orders)
	return string(catalogtest.CanonicalScan(t, cat, ident))
}

func TestDeleteBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident := morTable(t, "3")
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 10)
	snaps := catalogtest.Snapshots(t, cat, ident)
	_, err := w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 2)), "no_such_column")
	assert.ErrorIs(t, err, table.ErrBadUpsertKey, "Delete by an unknown column")
	_, err = w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 2)))
	assert.ErrorIs(t, err, table.ErrBadUpsertKey, "Delete without key columns")
	_, err = w.Delete(ctx, dayKey(t, w, day0), nil, "order_id")
	assert.ErrorIs(t, err, table.ErrNilInput, "Delete(nil keys)")
	_, err = w.DeleteWhere(ctx, dayKey(t, w, day0), nil)
	assert.ErrorIs(t, err, table.ErrBadFilter, "DeleteWhere(nil)")
	assert.Equal(t, snaps, catalogtest.Snapshots(t, cat, ident), "refused deletes must not make a snapshot")
}
