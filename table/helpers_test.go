package table_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

var day0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// ordersTable creates db.fact_orders on a fresh embedded catalog.
func ordersTable(t *testing.T) (catalog.Catalog, icetable.Identifier, string) {
	t.Helper()
	cat, dir := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, nil)
	return cat, ident, dir
}

func open(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, opts ...table.Option) *table.Writer {
	t.Helper()
	w, err := table.Open(context.Background(), cat, ident, opts...)
	require.NoError(t, err)
	return w
}

func key(t *testing.T, w *table.Writer, s string) partition.Key {
	t.Helper()
	k, err := w.Key(s)
	require.NoError(t, err)
	return k
}

func dayKey(t *testing.T, w *table.Writer, d time.Time) partition.Key {
	return key(t, w, "event_date="+d.Format(time.DateOnly))
}

// replaceDay replaces day d's partition with n generated orders.
func replaceDay(t *testing.T, w *table.Writer, d time.Time, n int) commit.Result {
	t.Helper()
	rows := orderdata.Reader(orderdata.Day(d, n), 100)
	defer rows.Release()
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, d), rows)
	require.NoError(t, err)
	return res
}

func reader(orders []orderdata.Order) array.RecordReader { return orderdata.Reader(orders, 64) }

// applyRacing is the ApplyChanges (byVersion) of mine on a table that
// holds order 2 (eu, created, version 1), through a catalog on which
// another writer runs race just before this call commits
// (catalogtest.Interposer): the setup of the changelog race tests.
func applyRacing(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer, race func(), mine event) table.ChangeResult {
	t.Helper()
	apply(t, w, byVersion, event{id: 2, region: "eu", status: "created", version: 1})
	racing := &catalogtest.Interposer{Catalog: cat, Before: race}
	rows := events(mine)
	defer rows.Release()
	res, err := open(t, racing, ident).ApplyChanges(context.Background(), rows, byVersion)
	require.NoError(t, err)
	return res
}
