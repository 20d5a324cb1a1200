package table_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// manyFileUpserts are upserts that each change keys of every earlier
// one and add new keys above them: after them a partition holds one data
// file per upsert, and each later change hits rows in most of them.
func manyFileUpserts() [][]orderdata.Order {
	var out [][]orderdata.Order
	for i := range 6 {
		out = append(out, changedOrders(i*15, 100+i*20, int64(1_000_000*(i+1))))
	}
	return out
}

// TestMergeOnReadUpsertOverManyFiles: a partition of many data files,
// each with rows the change deletes, is located file by file in
// parallel; the result must read as the copy-on-write table's, and on v3
// every updated row keeps one _row_id (checked by the lineage tests).
func TestMergeOnReadUpsertOverManyFiles(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			batches := manyFileUpserts()
			for _, b := range batches {
				upsert(t, w, b)
			}
			require.GreaterOrEqual(t, len(liveTasks(t, cat, ident)), 6, "data files of the partition")
			last := changedOrders(0, 220, 9_000_000)
			upsert(t, w, last)
			assert.Equal(t, cowResult(t, format, 100, append(batches, last)...), string(catalogtest.CanonicalScan(t, cat, ident)),
				"merge-on-read table after upserts over many files, want the copy-on-write content")
		})
	}
}

// TestMergeOnReadUpsertWithAMissingDataFile: when one of the partition's
// data files cannot be read while the others are read beside it, the
// upsert fails naming that file, commits nothing and leaves no file it
// wrote behind.
func TestMergeOnReadUpsertWithAMissingDataFile(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident, dir := morTableDir(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			for _, b := range manyFileUpserts() {
				upsert(t, w, b)
			}
			tasks := liveTasks(t, cat, ident)
			gone := strings.TrimPrefix(tasks[len(tasks)/2].File.FilePath(), "file://")
			require.NoError(t, os.Rename(gone, gone+".moved"))
			before := catalogtest.Snapshots(t, cat, ident)
			files := catalogtest.DataFiles(t, dir)

			rows := reader(changedOrders(0, 220, 9_000_000))
			defer rows.Release()
			_, err := w.Upsert(context.Background(), rows, "order_id")
			require.Error(t, err, "upsert over a partition with a missing data file")
			assert.ErrorIs(t, err, fs.ErrNotExist, "the error of a missing data file")
			assert.Contains(t, err.Error(), filepath.Base(gone), "the error names the missing file")
			assert.Equal(t, before, catalogtest.Snapshots(t, cat, ident), "snapshots after the failed upsert")
			assert.ElementsMatch(t, files, catalogtest.DataFiles(t, dir), "files in the warehouse after the failed upsert")
		})
	}
}
