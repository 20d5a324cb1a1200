package sink_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// churn is commits of changes to few keys: commit c upserts three of
// the keys (a new status, a later ts each time), and every seventh
// commit deletes one of them; the keys come back in later commits.
func churn(commits, keys int) [][]orderEvent {
	out := make([][]orderEvent, commits)
	for c := range commits {
		for j := range 3 {
			k := (2*c + j) % keys
			ev := orderEvent{fmt.Sprintf("k%02d", k), fmt.Sprintf("s%d", c), time.Duration(c)*time.Hour + time.Duration(j)*time.Minute}
			if c%7 == 6 && j == 0 {
				ev.status = "deleted"
			}
			out[c] = append(out[c], ev)
		}
	}
	return out
}

// latest is what a clean run of batches leaves: each key's event of the
// greatest ts, deleted keys gone.
func latest(batches [][]orderEvent) map[string]string {
	type st struct {
		status string
		ts     time.Duration
	}
	last := map[string]st{}
	for _, b := range batches {
		for _, e := range b {
			if cur, ok := last[e.id]; !ok || e.ts >= cur.ts {
				last[e.id] = st{e.status, e.ts}
			}
		}
	}
	out := map[string]string{}
	for k, v := range last {
		if v.status != "deleted" {
			out[k] = v.status
		}
	}
	return out
}

// liveFiles counts the live data files of the table and the delete
// files (position delete files, deletion vectors) applied to them.
func liveFiles(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) (data, deletes int) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return 0, 0
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, task := range tasks {
		for _, d := range slices.Concat(task.DeleteFiles, task.DeletionVectorFiles, task.EqualityDeleteFiles) {
			id := d.FilePath()
			if off := d.ContentOffset(); off != nil {
				id += fmt.Sprintf("#%d", *off)
			}
			seen[id] = true
		}
	}
	return len(tasks), len(seen)
}

// runChurn writes batches to s, one commit each, the events of batch i
// at offsets from 3i.
func runChurn(t *testing.T, s *sink.Sink, batches [][]orderEvent, from int) {
	t.Helper()
	for i := from; i < len(batches); i++ {
		writeEvents(t, s, int64(3*i), batches[i]...)
		mustCommit(t, s)
	}
}

// The upsert mode compacts as it goes: over many commits of changes to
// few keys the numbers of live data files and delete files stay bounded
// (without compaction each commit leaves one more data file, and delete
// files with it), and the table holds every key's latest state.
func TestUpsertSinkCompactsAsItGoes(t *testing.T) {
	t.Parallel()
	commits := 40
	if testing.Short() {
		commits = sink.DefaultCompactFiles + 2 // one past the bound (DefaultCompactFiles+1) a run without compaction would cross
	}
	batches := churn(commits, 8)
	want := latest(batches)
	for _, m := range upsertModes {
		if !m.mor {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			cat, dir := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
			maxData, maxDeletes := 0, 0
			for i := range batches {
				runChurn(t, s, batches[:i+1], i)
				d, x := liveFiles(t, cat, ident)
				maxData, maxDeletes = max(maxData, d), max(maxDeletes, x)
			}
			if got := states(t, cat, ident); !maps.Equal(got, want) {
				t.Errorf("table after %d commits = %v, want %v", commits, got, want)
			}
			data, deletes := liveFiles(t, cat, ident)
			t.Logf("after %d commits: %d data files, %d delete files (at most %d and %d on the way); %d compactions",
				commits, data, deletes, maxData, maxDeletes, s.Stats().Compactions)
			if bound := sink.DefaultCompactFiles + 1; maxData > bound || maxDeletes > bound {
				t.Errorf("at most %d data files and %d delete files over %d commits, want at most %d of each", maxData, maxDeletes, commits, bound)
			}
			if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, filepath.Join(dir, "db.db", "orders")); len(orphans) > 0 {
				t.Errorf("files referenced by no snapshot: %v", orphans)
			}
		})
	}
}

// mainLock is a commit lock (no mutual exclusion) that runs the hook set
// with arm at the n-th Lock of the table ident after arming, once: the
// upsert commit takes the first, the compaction after it the second.
type mainLock struct {
	ident icetable.Identifier
	mu    sync.Mutex
	n     int
	hook  func()
}

func (l *mainLock) arm(n int, f func()) { l.mu.Lock(); l.n, l.hook = n, f; l.mu.Unlock() }

func (l *mainLock) Lock(_ context.Context, ident icetable.Identifier) (func(), error) {
	l.mu.Lock()
	var f func()
	if slices.Equal(ident, l.ident) && l.hook != nil {
		if l.n--; l.n == 0 {
			f, l.hook = l.hook, nil
		}
	}
	l.mu.Unlock()
	if f != nil {
		f()
	}
	return func() {}, nil
}

// An upsert and a delete by another writer's ApplyChanges that commit
// while the upsert mode's compaction is between its planning and its
// commit, of rows in the files it rewrites, are neither lost nor
// duplicated: the compaction plans again on the new state, on format v2
// (position delete files) and v3 (deletion vectors).
func TestUpsertSinkCompactionRacesApplyChanges(t *testing.T) {
	t.Parallel()
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("mor-v%d", v), func(t *testing.T) {
			ctx := context.Background()
			cat, dir := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", v, true)
			lock := &mainLock{ident: ident}
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec), sink.WithCommitLock(lock))
			first := []orderEvent{{"a", "created", time.Hour}, {"b", "created", time.Hour}, {"c", "created", time.Hour},
				{"d", "created", time.Hour}, {"e", "created", time.Hour}, {"f", "created", time.Hour}}
			writeEvents(t, s, 0, first...)
			mustCommit(t, s)
			w, err := table.Open(ctx, catalogtest.Open(t, dir), ident)
			if err != nil {
				t.Fatal(err)
			}
			var raced error
			var racedSnap int64
			lock.arm(2, func() {
				rec := orderBatch([]orderEvent{{"c", "paid", 5 * time.Hour}, {"d", "deleted", 5 * time.Hour}})
				rdr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
				rec.Release()
				var res table.ChangeResult
				res, raced = w.ApplyChanges(ctx, rdr, upsertSpec)
				racedSnap = res.SnapshotID
			})
			// a and b updated: the first file has 2 of 6 rows deleted,
			// above the default ratio: the compaction after the commit
			// rewrites it, and races the other writer's change.
			writeEvents(t, s, 6, orderEvent{"a", "paid", 2 * time.Hour}, orderEvent{"b", "paid", 2 * time.Hour})
			mustCommit(t, s)
			if raced != nil || racedSnap == 0 {
				t.Fatalf("the concurrent ApplyChanges: snapshot %d, %v", racedSnap, raced)
			}
			if got, w := states(t, cat, ident), map[string]string{"a": "paid", "b": "paid", "c": "paid", "e": "created", "f": "created"}; !maps.Equal(got, w) {
				t.Errorf("table = %v, want %v", got, w)
			}
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			cur := tbl.CurrentSnapshot()
			if cur.Summary.Operation != icetable.OpReplace || cur.ParentSnapshotID == nil || *cur.ParentSnapshotID != racedSnap {
				t.Errorf("current snapshot %s, parent %v; want the compaction (replace) after the concurrent change %d", cur.Summary.Operation, cur.ParentSnapshotID, racedSnap)
			}
			if s.Stats().Compactions != 1 {
				t.Errorf("Compactions = %d, want 1", s.Stats().Compactions)
			}
			// The next commit is not fenced by the compaction, and the
			// concurrent change stays.
			writeEvents(t, s, 8, orderEvent{"g", "created", 6 * time.Hour})
			mustCommit(t, s)
			if got, w := states(t, cat, ident), map[string]string{"a": "paid", "b": "paid", "c": "paid", "e": "created", "f": "created", "g": "created"}; !maps.Equal(got, w) {
				t.Errorf("table after the next commit = %v, want %v", got, w)
			}
			if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, filepath.Join(dir, "db.db", "orders")); len(orphans) > 0 {
				t.Errorf("files referenced by no snapshot: %v", orphans)
			}
		})
	}
}

// A rollback of main to a compaction snapshot of the upsert mode (which
// records no positions: they come from the sink commit before it) takes
// the positions back with the rows: a new sink resumes from there, and
// the compacted table ends as a clean run leaves it.
func TestUpsertSinkRollbackToCompaction(t *testing.T) {
	t.Parallel()
	commits := 30
	if testing.Short() {
		commits = 12
	}
	batches := churn(commits, 8)
	want := latest(batches)
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("mor-v%d", v), func(t *testing.T) {
			ctx := context.Background()
			cat, dir := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", v, true)
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec), sink.WithoutSnapshotExpiry())
			runChurn(t, s, batches[:commits/2], 0)
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			var back *icetable.Snapshot // the newest compaction on main so far
			for snap := tbl.CurrentSnapshot(); snap != nil && back == nil; {
				if snap.Summary.Operation == icetable.OpReplace {
					back = snap
				} else if snap.ParentSnapshotID != nil {
					snap = tbl.SnapshotByID(*snap.ParentSnapshotID)
				} else {
					snap = nil
				}
			}
			if back == nil {
				t.Fatal("no compaction in the first half of the run")
			}
			if _, ok := back.Summary.Properties[sink.SummaryPositions]; ok {
				t.Errorf("compaction snapshot %d records %s", back.SnapshotID, sink.SummaryPositions)
			}
			runChurn(t, s, batches, commits/2)
			rollback(t, cat, ident, back.SnapshotID)
			r := mustOpen(t, catalogtest.Open(t, dir), ident, sink.WithUpsert(upsertSpec))
			pos, err := r.Start(ctx, sp0)
			if err != nil {
				t.Fatal(err)
			}
			if pos[sp0] < 2 || pos[sp0]%3 != 2 || pos[sp0] >= int64(3*commits/2) {
				t.Fatalf("Start after the rollback = %d, want the end of a commit of the first half", pos[sp0])
			}
			runChurn(t, r, batches, int(pos[sp0]+1)/3)
			if got := states(t, cat, ident); !maps.Equal(got, want) {
				t.Errorf("table after the rollback and the replay = %v, want %v", got, want)
			}
			data, deletes := liveFiles(t, cat, ident)
			if bound := sink.DefaultCompactFiles + 1; data > bound || deletes > bound {
				t.Errorf("%d data files and %d delete files after the replay, want at most %d of each", data, deletes, bound)
			}
		})
	}
}

// Snapshot expiry in upsert mode on format v3 never removes a Puffin
// file that still holds a live deletion vector: compactions that rewrite
// only fully deleted files (ratio 1) remove some vectors of a Puffin file
// and keep others, and every snapshot the sink expires meanwhile frees
// only files no snapshot left references.
func TestUpsertSinkExpiryKeepsSharedDeletionVectors(t *testing.T) {
	t.Parallel()
	commits := 24
	if testing.Short() {
		commits = 16 // still a dozen compactions, snapshots expired between them
	}
	batches := churn(commits, 8)
	cat, dir := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 3, true)
	s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec), sink.WithDeleteRatioCompaction(1),
		sink.WithSmallFileCompaction(1000, 0), sink.WithSnapshotExpiry(2, 0, 3))
	runChurn(t, s, batches, 0)
	if got, want := states(t, cat, ident), latest(batches); !maps.Equal(got, want) {
		t.Errorf("table after %d commits = %v, want %v", commits, got, want)
	}
	if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, filepath.Join(dir, "db.db", "orders")); len(orphans) > 0 {
		t.Errorf("files referenced by no snapshot: %v", orphans)
	}
}

func TestDeleteRatioCompactionOptionChecked(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", 2, true)
	for _, ratio := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := sink.Open(context.Background(), cat, ident, sink.WithUpsert(upsertSpec), sink.WithDeleteRatioCompaction(ratio)); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("Open(WithDeleteRatioCompaction(%v)) = %v, want ErrBadOption", ratio, err)
		}
	}
	for _, ratio := range []float64{0, 0.5, 1} {
		s, err := sink.Open(context.Background(), cat, ident, sink.WithUpsert(upsertSpec), sink.WithDeleteRatioCompaction(ratio))
		if err != nil {
			t.Errorf("Open(WithDeleteRatioCompaction(%v)) = %v, want nil", ratio, err)
			continue
		}
		_ = s.Close(context.Background())
	}
}
