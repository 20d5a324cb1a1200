package table_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// With Scope CompactFiles, Compact rewrites only the data files whose
// deletes delete MinDeleteRatio of their rows: a large file with few
// deletes keeps its path and its delete file, a file without deletes
// stays, and the snapshot removes exactly the file rewritten and its
// delete file; the rows are those before.
func TestCompactFilesRewritesSelectedFiles(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident, table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: 0.2, MinSmallFiles: 8, Scope: table.CompactFiles}))
			replaceDay(t, w, day0, 1000)
			big := liveTasks(t, cat, ident)[0].File.FilePath()
			upsert(t, w, changedOrders(0, 10, 1_000)) // 10 of big's 1000 rows deleted, a file of 10
			small := filesBut(liveTasks(t, cat, ident), big)
			require.Len(t, small, 1)
			upsert(t, w, changedOrders(0, 5, 2_000)) // 5 of small's 10 rows deleted, a file of 5
			newest := filesBut(liveTasks(t, cat, ident), big, small[0])
			require.Len(t, newest, 1)
			before := string(catalogtest.CanonicalScan(t, cat, ident))

			res, err := w.Compact(ctx, dayKey(t, w, day0))
			require.NoError(t, err)
			assert.False(t, res.Unchanged, "Compact(a file with half its rows deleted).Unchanged")
			assert.Equal(t, 1, res.DeletedFiles, "data files removed")
			assert.Equal(t, int64(5), res.AddedRows, "rows written")
			assert.Equal(t, before, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after Compact, want the rows before")
			assert.Equal(t, icetable.OpReplace, summary(t, cat, ident).Operation, "operation of the compaction")
			tasks := liveTasks(t, cat, ident)
			require.Len(t, tasks, 3, "data files after Compact")
			for _, task := range tasks {
				deletes := len(task.DeleteFiles) + len(task.DeletionVectorFiles)
				switch p := task.File.FilePath(); {
				case p == big:
					assert.Equal(t, 1, deletes, "delete files of the large file with 1%% deleted, which stays")
				case p == small[0]:
					t.Errorf("the file with half its rows deleted is still live")
				default:
					assert.Zero(t, deletes, "delete files of %s", p)
				}
			}
			assert.Contains(t, paths(tasks), newest[0], "the file without deletes stays")

			res, err = w.Compact(ctx, dayKey(t, w, day0))
			require.NoError(t, err)
			assert.True(t, res.Unchanged, "Compact(no file above the ratio, 3 small files).Unchanged")
		})
	}
}

// filesBut are the data file paths of tasks but those named.
func filesBut(tasks []icetable.FileScanTask, but ...string) []string {
	var out []string
	for _, p := range paths(tasks) {
		if !slices.Contains(but, p) {
			out = append(out, p)
		}
	}
	return out
}

// With Scope CompactFiles, small files merge in size tiers: a file
// bigger than the smaller ones together waits, so a file holding most
// of the partition is not rewritten each time a few new small files
// are folded (the cost of a compaction follows the new rows, not the
// partition).
func TestCompactFilesLeavesTheBigFileToSmallerOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident := morTable(t, "2")
	w := open(t, cat, ident, table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: 0.2, MinSmallFiles: 3, SmallFileBytes: 1 << 30, Scope: table.CompactFiles}))
	replaceDay(t, w, day0, 5000)
	big := liveTasks(t, cat, ident)[0].File.FilePath()
	for i := range 3 { // new orders: no row of big deleted
		upsert(t, w, changedOrders(5000+10*i, 5010+10*i, 1_000))
	}
	require.Len(t, liveTasks(t, cat, ident), 4)
	before := string(catalogtest.CanonicalScan(t, cat, ident))

	res, err := w.Compact(ctx, dayKey(t, w, day0))
	require.NoError(t, err)
	assert.Equal(t, 3, res.DeletedFiles, "data files removed: the three new ones")
	assert.Equal(t, int64(30), res.AddedRows, "rows written")
	assert.Equal(t, before, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after Compact, want the rows before")
	tasks := liveTasks(t, cat, ident)
	assert.Len(t, tasks, 2, "data files after Compact")
	assert.Contains(t, paths(tasks), big, "the file of 5000 rows stays")
}
