package table_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/table"
)

// A row deleted by a merge-on-read delete (a position delete or a
// deletion vector, no tombstone) is not what the table holds: an older
// change of its key is not stale against it, and lands. The comparison
// reads data files without their deletes and skips the deleted
// positions itself, so a deleted row it took for live would make the
// change stale.
func TestApplyChangesComparesWithLiveRowsOnly(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		ctx := context.Background()
		apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "shipped", version: 5},
			event{id: 2, region: "eu", status: "created", version: 1})
		gone := events(event{id: 1, region: "eu"})
		defer gone.Release()
		_, err := w.Delete(ctx, key(t, w, "region=eu"), gone, "order_id")
		require.NoError(t, err)
		require.Equal(t, map[int64]string{2: "eu/created/1"}, current(t, cat, ident))

		res := apply(t, w, byVersion, event{id: 1, region: "eu", status: "paid", version: 4})
		assert.Zero(t, res.Stale, "the change of order 1 compared with its deleted row")
		assert.Equal(t, map[int64]string{1: "eu/paid/4", 2: "eu/created/1"}, current(t, cat, ident))
	})
}
