package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// The races below interpose another writer's commit of order 1 into
// region ap between this call's comparison and its commit of order 1
// into region us: partitions the call does not touch when it compares.

func TestApplyChangesNewerCommitInOtherPartitionWins(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		res := applyRacing(t, cat, ident, w, func() {
			apply(t, open(t, cat, ident), byVersion, event{id: 1, region: "ap", status: "shipped", version: 3})
		}, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, int64(1), res.Stale, "Stale of the change that lost the race to a newer one in another partition")
		assert.Equal(t, map[int64]string{1: "ap/shipped/3", 2: "eu/created/1"}, current(t, cat, ident),
			"after the race, want one live row of order 1: the newer one")
	})
}

func TestApplyChangesOlderCommitInOtherPartitionLoses(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		res := applyRacing(t, cat, ident, w, func() {
			apply(t, open(t, cat, ident), byVersion, event{id: 1, region: "ap", status: "created", version: 1})
		}, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, int64(0), res.Stale, "Stale of the newer change")
		assert.Equal(t, map[int64]string{1: "us/paid/2", 2: "eu/created/1"}, current(t, cat, ident),
			"after the race, want one live row of order 1: the newer one")
	})
}

func TestApplyChangesRaceWithUpsertInOtherPartition(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		applyRacing(t, cat, ident, w, func() {
			rows := events(event{id: 1, region: "ap", status: "shipped", version: 3})
			defer rows.Release()
			_, err := open(t, cat, ident).Upsert(context.Background(), rows, "order_id")
			require.NoError(t, err)
		}, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, map[int64]string{1: "ap/shipped/3", 2: "eu/created/1"}, current(t, cat, ident),
			"after racing an upsert of a newer row, want that row only")
	})
}

func TestUpsertNewerOnlyNewerCommitInOtherPartitionWins(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, _ *table.Writer) {
		newerOnly := []table.Option{table.WithUpsertOrder("version", "offset"), table.WithUpsertNewerOnly()}
		upsert := func(w *table.Writer, e event) int64 {
			rows := events(e)
			defer rows.Release()
			res, err := w.Upsert(context.Background(), rows, "order_id")
			require.NoError(t, err)
			return res.Stale
		}
		upsert(open(t, cat, ident, newerOnly...), event{id: 2, region: "eu", status: "created", version: 1})
		racing := &catalogtest.Interposer{Catalog: cat, Before: func() {
			upsert(open(t, cat, ident, newerOnly...), event{id: 1, region: "ap", status: "shipped", version: 3})
		}}
		stale := upsert(open(t, racing, ident, newerOnly...), event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, int64(1), stale, "Stale of the upsert that lost the race to a newer row in another partition")
		assert.Equal(t, map[int64]string{1: "ap/shipped/3", 2: "eu/created/1"}, current(t, cat, ident),
			"after the race, want the newer row only")
	})
}
