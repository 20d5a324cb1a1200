package table_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// Two merge-on-read upserts of the same keys: the one that commits second
// locates the keys again on the first one's state, so every key ends with
// exactly one row, the second writer's.
func TestMergeOnReadConcurrentUpsertsOfOneKey(t *testing.T) {
	t.Parallel()
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

// A compaction that meets a change of its partition committed while it
// rewrote it (a delete, an upsert, a replacement) plans and rewrites the
// partition again on the new state: it succeeds, the change is kept (no
// deleted row comes back, no new row is lost), and the files of the lost
// rewrite are removed.
func TestCompactRacedByChangeOfItsPartition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	changes := map[string]func(t *testing.T, w *table.Writer){
		"delete": func(t *testing.T, w *table.Writer) {
			_, err := w.Delete(ctx, dayKey(t, w, day0), reader(orderdata.Day(day0, 100)[50:60]), "order_id")
			require.NoError(t, err)
		},
		"upsert":  func(t *testing.T, w *table.Writer) { upsert(t, w, changedOrders(30, 130, 2_000_000)) },
		"replace": func(t *testing.T, w *table.Writer) { replaceDay(t, w, day0, 70) },
	}
	for _, format := range morFormats {
		for name, change := range changes {
			t.Run("v"+format+"/"+name, func(t *testing.T) {
				// want: the same writes, with the change, and no compaction.
				wantCat, wantIdent := morTable(t, format)
				compactRaceSetup(t, open(t, wantCat, wantIdent))
				change(t, open(t, wantCat, wantIdent))
				want := string(catalogtest.CanonicalScan(t, wantCat, wantIdent))

				cat, ident, dir := morTableDir(t, format)
				compactRaceSetup(t, open(t, cat, ident))
				racer := &catalogtest.Interposer{Catalog: cat, Before: func() { change(t, open(t, cat, ident)) }}
				cw := open(t, racer, ident)
				res, err := cw.Compact(ctx, dayKey(t, cw, day0))
				require.NoError(t, err, "Compact raced by a %s of its partition", name)
				assert.Greater(t, res.Attempts, 1, "Compact raced by a %s: Attempts", name)
				assert.Equal(t, want, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after a compaction raced by a %s", name)
				for _, task := range liveTasks(t, cat, ident) {
					assert.Empty(t, task.DeleteFiles, "position delete files of %s after Compact", task.File.FilePath())
					assert.Empty(t, task.DeletionVectorFiles, "deletion vectors of %s after Compact", task.File.FilePath())
				}
				assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left by the lost rewrite")
			})
		}
	}
}

// With the retry budget spent, a raced compaction fails with
// ErrConflict: the change stays, the rewrite's files are removed.
func TestCompactRacedOutOfAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, dir := morTableDir(t, "2")
	compactRaceSetup(t, open(t, cat, ident))
	change := func() { upsert(t, open(t, cat, ident), changedOrders(30, 130, 2_000_000)) }
	racer := &catalogtest.Interposer{Catalog: cat, Before: change}
	cw := open(t, racer, ident, table.WithRetry(commit.Policy{Attempts: 1}))
	_, err := cw.Compact(ctx, dayKey(t, cw, day0))
	assert.ErrorIs(t, err, commit.ErrConflict, "Compact raced with one attempt")
	ids := orderIDs(t, cat, ident)
	assert.Len(t, ids, 145, "rows after the failed compaction: 95 + 30 new of day0, 20 of day1")
	assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left by the failed compaction")
}

// compactRaceSetup gives day0 100 rows with 5 deleted (a delete file to
// fold) and day1 20 rows.
func compactRaceSetup(t *testing.T, w *table.Writer) {
	t.Helper()
	replaceDay(t, w, day0, 100)
	replaceDay(t, w, day0.AddDate(0, 0, 1), 20)
	_, err := w.Delete(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 100)[:5]), "order_id")
	require.NoError(t, err)
}

// A compaction that meets a commit to another partition only retries its
// commit: it rewrites its own partition once.
func TestCompactRacedByOtherPartitionRewritesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, dir := morTableDir(t, "3")
	compactRaceSetup(t, open(t, cat, ident))
	wantCat, wantIdent := morTable(t, "3")
	compactRaceSetup(t, open(t, wantCat, wantIdent))
	replaceDay(t, open(t, wantCat, wantIdent), day0.AddDate(0, 0, 1), 30)
	want := string(catalogtest.CanonicalScan(t, wantCat, wantIdent))
	in := faults.New(faults.Fail, 0) // counts, never fails
	racer := &catalogtest.Interposer{Catalog: faults.WrapCatalog(cat, in), Before: func() {
		replaceDay(t, open(t, cat, ident), day0.AddDate(0, 0, 1), 30)
	}}
	cw := open(t, racer, ident)
	res, err := cw.Compact(ctx, dayKey(t, cw, day0))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts, "Compact raced by a commit to another partition: Attempts")
	var created []string
	for _, op := range in.Ops() {
		if strings.HasPrefix(op, "io.create ") && strings.HasSuffix(op, ".parquet") && strings.Contains(op, "/data/") {
			created = append(created, op)
		}
	}
	assert.Len(t, created, res.AddedFiles, "data files the compaction wrote, want only those it committed: %v", created)
	assert.Equal(t, want, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after the compaction")
	assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left behind")
}

// An upsert that meets a compaction committed meanwhile locates its keys
// again in the compacted files.
func TestMergeOnReadUpsertRacedByCompact(t *testing.T) {
	t.Parallel()
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
