//go:build integration

package integration

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

const day0 = "2026-07-14"

func days(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = mustDay(day0).AddDate(0, 0, i).Format(time.DateOnly)
	}
	return out
}

func openWriter(t testing.TB, e env, name string, opts ...table.Option) (*table.Writer, icetable.Identifier) {
	t.Helper()
	cat := e.catalog(t)
	ident := icetable.Identifier{e.NS, name}
	w, err := table.Open(context.Background(), cat, ident, opts...)
	require.NoError(t, err)
	return w, ident
}

// cleanScan is the scan of a fresh table of the same environment after
// one clean run of fill.
func cleanScan(t *testing.T, e env, fill func(w *table.Writer)) []byte {
	t.Helper()
	cat := e.catalog(t)
	ident := e.ordersTable(t, cat, "clean_"+randomID())
	w, err := table.Open(context.Background(), cat, ident)
	require.NoError(t, err)
	fill(w)
	return scan(t, cat, ident)
}

func replaceDay(t testing.TB, w *table.Writer, day string, tag, n int) {
	t.Helper()
	_, err := replaceTagged(context.Background(), w, day, tag, n, "", 0)
	require.NoError(t, err, "replace %s", day)
}

// assertNoOrphans fails when a file under the table location is referenced
// by no snapshot or metadata.
func assertNoOrphans(t testing.TB, e env, ident icetable.Identifier) {
	t.Helper()
	tbl, err := e.catalog(t).LoadTable(context.Background(), ident)
	require.NoError(t, err)
	rep, err := cleanup.Orphans(context.Background(), tbl, cleanup.AnyAge())
	require.NoError(t, err)
	assert.Empty(t, rep.Orphans, "orphan files under %s", tbl.Location())
}

// assertNoOrphanData is assertNoOrphans for concurrent writers: a commit
// attempt that lost a conflict may leave the metadata file the catalog
// wrote for it (iceberg-go's SQL catalog writes it before its conditional
// update and keeps it when the update loses); icerun removes its own data
// files and manifests. The leftovers are counted, removed by the cleanup,
// and the table must not change.
func assertNoOrphanData(t testing.TB, e env, ident icetable.Identifier) {
	t.Helper()
	cat := e.catalog(t)
	before := scan(t, cat, ident)
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	rep, err := cleanup.Orphans(context.Background(), tbl, cleanup.AnyAge(), cleanup.Execute())
	require.NoError(t, err)
	var data []string
	for _, f := range rep.Orphans {
		if strings.HasSuffix(f.Path, ".parquet") {
			data = append(data, f.Path)
		}
	}
	assert.Empty(t, data, "orphan data files under %s", tbl.Location())
	var meta []string
	for _, f := range rep.Orphans {
		if !strings.HasSuffix(f.Path, ".parquet") {
			meta = append(meta, path.Base(f.Path))
		}
		// icerun removes the manifests and the catalog's metadata files of an
		// attempt the catalog refused (commit/discard.go). What remains are
		// committed metadata versions older than the metadata log keeps
		// (write.metadata.previous-versions-max, default 100), which Iceberg
		// leaves on disk unless write.metadata.delete-after-commit.enabled.
		assert.False(t, strings.HasSuffix(f.Path, ".avro"), "manifest %s of a lost commit attempt left behind", f.Path)
	}
	t.Logf("%s: %d metadata files no longer in the metadata log, %d removed by cleanup", e.Target, len(meta), len(rep.Removed))
	assert.Len(t, rep.Removed, len(rep.Orphans))
	assert.Equal(t, before, scan(t, cat, ident), "cleanup changed the table")
	assertNoOrphans(t, e, ident)
}

// loaded returns a fresh orders table on e whose partition day0 holds
// writer 1's 300 rows, and a writer on it.
func (e env) loaded(t *testing.T) (catalog.Catalog, icetable.Identifier, *table.Writer) {
	t.Helper()
	cat := e.catalog(t)
	ident := e.ordersTable(t, cat, "orders")
	w, err := table.Open(context.Background(), cat, ident)
	require.NoError(t, err)
	replaceDay(t, w, day0, 1, 300)
	return cat, ident, w
}

func TestReplaceAndRerun(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		cat, ident, w := e.loaded(t)
		replaceDay(t, w, days(2)[1], 1, 100)
		first := scan(t, cat, ident)

		k, err := w.Key("event_date=" + day0)
		require.NoError(t, err)
		rows := orderdata.Reader(tagged(day0, 1, 300), 500)
		defer rows.Release()
		res, err := w.ReplacePartition(context.Background(), k, rows)
		require.NoError(t, err)
		assert.True(t, res.Unchanged, "rerun of the same input: Unchanged = false, want true")
		assert.Equal(t, first, scan(t, cat, ident), "rerun changed the table")

		replaceDay(t, w, day0, 2, 250) // new content, then back: same as a clean run
		replaceDay(t, w, day0, 1, 300)
		want := cleanScan(t, e, func(w *table.Writer) {
			replaceDay(t, w, day0, 1, 300)
			replaceDay(t, w, days(2)[1], 1, 100)
		})
		assert.Equal(t, want, scan(t, cat, ident), "table after reruns differs from one clean run")
		assertNoOrphans(t, e, ident)
	})
}

func TestDynamicReplace(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		cat := e.catalog(t)
		ident := e.ordersTable(t, cat, "orders")
		w, err := table.Open(context.Background(), cat, ident)
		require.NoError(t, err)
		d := days(3)
		var all []orderdata.Order
		for _, day := range d {
			all = append(all, tagged(day, 1, 50)...)
		}
		rows := orderdata.Reader(all, 40)
		res, err := w.ReplacePartitions(context.Background(), rows)
		rows.Release()
		require.NoError(t, err)
		assert.Len(t, res.Partitions, 3)

		rows = orderdata.Reader(append(tagged(d[0], 2, 10), tagged(d[2], 2, 20)...), 40)
		res, err = w.ReplacePartitions(context.Background(), rows)
		rows.Release()
		require.NoError(t, err)
		assert.Equal(t, []string{"event_date=" + d[0], "event_date=" + d[2]}, res.Partitions)

		assert.Equal(t, map[string]map[string]int{d[0]: {"2": 10}, d[1]: {"1": 50}, d[2]: {"2": 20}}, tagsByDay(t, cat, ident))
		assertNoOrphans(t, e, ident)
	})
}

func TestWriterProcesses(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		const writers, rows = 4, 200
		t.Run("same partition", func(t *testing.T) {
			cat := e.catalog(t)
			ident := e.ordersTable(t, cat, "same")
			jobs := make([]job, writers)
			for i := range jobs {
				jobs[i] = job{Env: e, Table: "same", Tag: 1000 + i, Rows: rows, Days: []string{day0}}
			}
			for i, outs := range runJobs(t, jobs) {
				require.Len(t, outs, 1)
				assert.Empty(t, outs[0].Err, "writer %d", i)
			}
			got := tagsByDay(t, cat, ident)
			require.Len(t, got, 1)
			assert.Len(t, got[day0], 1, "the partition must hold exactly one writer's rows, got %v", got[day0])
			for _, n := range got[day0] {
				assert.Equal(t, rows, n)
			}
			assertNoOrphanData(t, e, ident)
		})
		t.Run("different partitions", func(t *testing.T) {
			cat := e.catalog(t)
			ident := e.ordersTable(t, cat, "different")
			d := days(writers)
			jobs := make([]job, writers)
			for i := range jobs {
				jobs[i] = job{Env: e, Table: "different", Tag: 1000 + i, Rows: rows, Days: []string{d[i]}}
			}
			for i, outs := range runJobs(t, jobs) {
				require.Len(t, outs, 1)
				assert.Empty(t, outs[0].Err, "writer %d", i)
			}
			got := tagsByDay(t, cat, ident)
			for i, day := range d {
				assert.Equal(t, map[string]int{strconv.Itoa(1000 + i): rows}, got[day], "partition %s", day)
			}
			assertNoOrphanData(t, e, ident)
		})
	})
}

func TestKilledWriterThenRerun(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		cat, ident, w := e.loaded(t)
		before := scan(t, cat, ident)

		marker := filepath.Join(t.TempDir(), "streaming")
		j := job{Env: e, Table: "orders", Tag: 2, Rows: 40000, Days: []string{day0}, Marker: marker, KillAfter: 20}
		cmd, _, stderr := j.start(t)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "writer never reached the kill point: %s", stderr)
			time.Sleep(20 * time.Millisecond)
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
		assert.Equal(t, before, scan(t, cat, ident), "a killed writer changed the table")

		replaceDay(t, w, day0, 2, 40000) // the rerun
		want := cleanScan(t, e, func(w *table.Writer) { replaceDay(t, w, day0, 2, 40000) })
		assert.Equal(t, want, scan(t, cat, ident), "rerun after SIGKILL differs from a clean run")

		// What the killed writer left is found and removed by the cleanup;
		// the table does not change.
		tbl, err := cat.LoadTable(context.Background(), ident)
		require.NoError(t, err)
		rep, err := cleanup.Orphans(context.Background(), tbl, cleanup.AnyAge(), cleanup.Execute())
		require.NoError(t, err)
		t.Logf("%s: the killed writer left %d orphan files, removed %d", e.Target, len(rep.Orphans), len(rep.Removed))
		assert.Len(t, rep.Removed, len(rep.Orphans))
		assert.Equal(t, want, scan(t, cat, ident), "cleanup changed the table")
		assertNoOrphans(t, e, ident)
	})
}

func TestSchemaRenameThenRerun(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		cat, ident, w := e.loaded(t)
		before := scan(t, cat, ident)

		tbl, err := cat.LoadTable(context.Background(), ident)
		require.NoError(t, err)
		mapping := tbl.NameMapping()
		if mapping == nil {
			mapping = tbl.Schema().NameMapping()
		}
		txn := tbl.NewTransaction()
		require.NoError(t, txn.UpdateSchema(true, false, icetable.WithNameMapping(mapping)).RenameColumn([]string{"currency"}, "ccy").Commit())
		_, err = txn.Commit(context.Background())
		require.NoError(t, err)

		// The producer still sends "currency": it resolves to ccy through
		// the name mapping, and the content is what it was.
		replaceDay(t, w, day0, 1, 300)
		assert.Equal(t, before, scan(t, cat, ident), "rerun after the rename changed the content")
		tbl, err = cat.LoadTable(context.Background(), ident)
		require.NoError(t, err)
		_, ok := tbl.Schema().FindFieldByName("ccy")
		assert.True(t, ok, "column was not renamed")
		assertNoOrphans(t, e, ident)
	})
}
