package snapshotcommit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// A stamp adds its properties to every commit of its table made under
// its context, computed on the attempt's base; its error commits
// nothing; a commit of another table under the same context is not
// stamped.
func TestStamp(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	other := ordersTable(t, cat, "other", nil)
	var bases []int64
	stamped := snapshotcommit.WithStamp(ctx, ident, func(tbl *icetable.Table) (iceberg.Properties, iceberg.Properties, error) {
		var id int64
		if s := tbl.CurrentSnapshot(); s != nil {
			id = s.SnapshotID
		}
		bases = append(bases, id)
		return iceberg.Properties{"test.stamp": "on"}, iceberg.Properties{"test.prop": "set"}, nil
	})
	replace := func(ctx context.Context, ident icetable.Identifier) error {
		w := openWriter(t, cat, ident)
		rows := orderdata.Reader(days(5, day(0)), 256)
		defer rows.Release()
		_, err := w.ReplacePartition(ctx, dayKey(t, w, day(0)), rows)
		return err
	}
	require.NoError(t, replace(stamped, ident))
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Equal(t, "on", tbl.CurrentSnapshot().Summary.Properties["test.stamp"])
	require.Equal(t, "set", tbl.Properties()["test.prop"])
	require.Equal(t, []int64{0}, bases, "the stamp is called once, on the attempt's base")

	require.NoError(t, replace(stamped, other))
	tbl, err = cat.LoadTable(ctx, other)
	require.NoError(t, err)
	require.NotContains(t, tbl.CurrentSnapshot().Summary.Properties, "test.stamp")
	require.NotContains(t, tbl.Properties(), "test.prop")

	fenced := errors.New("fenced")
	failing := snapshotcommit.WithStamp(ctx, ident, func(*icetable.Table) (iceberg.Properties, iceberg.Properties, error) {
		return nil, nil, fenced
	})
	before := catalogtest.Snapshots(t, cat, ident)
	w := openWriter(t, cat, ident)
	rows := orderdata.Reader(days(7, day(0)), 256)
	defer rows.Release()
	_, err = w.ReplacePartition(failing, dayKey(t, w, day(0)), rows)
	require.ErrorIs(t, err, fenced)
	require.Equal(t, before, catalogtest.Snapshots(t, cat, ident), "a failing stamp commits nothing")
}
