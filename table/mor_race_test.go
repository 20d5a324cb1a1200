package table_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// Two merge-on-read upserts of the same keys: the one that commits second
// locates the keys again on the first one's state, so every key ends with
// exactly one row, the second writer's.
func TestMergeOnReadConcurrentUpsertsOfOneKey(t *testing.T) {
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident := morTable(t, format)
			replaceDay(t, open(t, cat, ident), day0, 100)
			first, second := changedOrders(40, 60, 1_000_000), changedOrders(40, 60, 2_000_000)
			racer := &catalogtest.Interposer{Catalog: cat, Before: func() { upsert(t, open(t, cat, ident), first) }}
			res := upsert(t, open(t, racer, ident), second)
			assert.Greater(t, res.Attempts, 1, "Upsert that lost the race: Attempts")
			for id, n := range orderIDs(t, cat, ident) {
				assert.Equal(t, 1, n, "rows of order %s after two concurrent upserts of it", id)
			}
			assert.Equal(t, cowResult(t, format, 100, first, second), string(catalogtest.CanonicalScan(t, cat, ident)),
				"table after the race, want the second writer's rows")
		})
	}
}

// A compaction that meets a delete committed while it rewrote the
// partition fails with ErrConflict: the deleted rows stay deleted.
func TestCompactRacedByDelete(t *testing.T) {
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident, dir := morTableDir(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			_, err := w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 100)[:5]), "order_id")
			require.NoError(t, err)
			racer := &catalogtest.Interposer{Catalog: cat, Before: func() {
				w := open(t, cat, ident)
				_, err := w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 100)[50:60]), "order_id")
				require.NoError(t, err)
			}}
			cw := open(t, racer, ident)
			_, err = cw.Compact(ctx, dayKey(t, cw, day0))
			assert.ErrorIs(t, err, commit.ErrConflict, "Compact raced by a delete")
			ids := orderIDs(t, cat, ident)
			assert.Len(t, ids, 85, "rows after the raced compaction")
			assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left by the failed compaction")
		})
	}
}

// An upsert that meets a compaction committed meanwhile locates its keys
// again in the compacted files.
func TestMergeOnReadUpsertRacedByCompact(t *testing.T) {
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			first := changedOrders(10, 20, 1_000_000)
			upsert(t, w, first)
			racer := &catalogtest.Interposer{Catalog: cat, Before: func() {
				w := open(t, cat, ident)
				_, err := w.Compact(ctx, dayKey(t, w, day0))
				require.NoError(t, err)
			}}
			second := changedOrders(15, 120, 3_000_000)
			upsert(t, open(t, racer, ident), second)
			assert.Equal(t, cowResult(t, format, 100, first, second), string(catalogtest.CanonicalScan(t, cat, ident)),
				"table after an upsert raced by a compaction")
		})
	}
}
