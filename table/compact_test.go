package table_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

func TestCompactFoldsDeletes(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 300)
			replaceDay(t, w, day0.AddDate(0, 0, 1), 20)
			upsert(t, w, changedOrders(250, 350, 1_000_000))
			_, err := w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 300)[:40]), "order_id")
			require.NoError(t, err)
			before := string(catalogtest.CanonicalScan(t, cat, ident))
			snaps := catalogtest.Snapshots(t, cat, ident)

			res, err := w.Compact(ctx, dayKey(t, w, day0))
			require.NoError(t, err)
			assert.False(t, res.Unchanged, "Compact(partition with deletes).Unchanged")
			assert.Equal(t, snaps+1, catalogtest.Snapshots(t, cat, ident), "snapshots after Compact")
			assert.Equal(t, before, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after Compact, want the rows before")
			for _, task := range liveTasks(t, cat, ident) {
				assert.Empty(t, task.DeleteFiles, "position delete files of %s after Compact", task.File.FilePath())
				assert.Empty(t, task.DeletionVectorFiles, "deletion vectors of %s after Compact", task.File.FilePath())
			}

			res, err = w.Compact(ctx, dayKey(t, w, day0))
			require.NoError(t, err)
			assert.True(t, res.Unchanged, "Compact(compacted partition).Unchanged = false, want true")
			all, err := w.CompactAll(ctx)
			require.NoError(t, err)
			assert.Empty(t, all, "CompactAll with nothing to fold")
			assert.Equal(t, snaps+1, catalogtest.Snapshots(t, cat, ident), "a compaction with nothing to fold must not make a snapshot")
		})
	}
}

func TestCompactPolicySmallFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident := morTable(t, "2")
	w := open(t, cat, ident, table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: 0.5, MinSmallFiles: 3}))
	replaceDay(t, w, day0, 100)
	upsert(t, w, changedOrders(100, 110, 1))
	// One delete file deleting nothing of note, two small files: left alone.
	res, err := w.Compact(ctx, dayKey(t, w, day0))
	require.NoError(t, err)
	assert.True(t, res.Unchanged, "Compact(2 small files, no deletes).Unchanged")
	upsert(t, w, changedOrders(110, 120, 1))
	before := string(catalogtest.CanonicalScan(t, cat, ident))
	res, err = w.Compact(ctx, dayKey(t, w, day0))
	require.NoError(t, err)
	assert.False(t, res.Unchanged, "Compact(3 small files).Unchanged")
	assert.Len(t, liveTasks(t, cat, ident), 1, "data files after compacting 3 small files")
	assert.Equal(t, before, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after Compact")

	_, err = table.Open(ctx, cat, ident, table.WithCompactPolicy(table.CompactPolicy{MinSmallFiles: 1}))
	assert.ErrorIs(t, err, table.ErrBadOption, "WithCompactPolicy(MinSmallFiles 1)")
}
