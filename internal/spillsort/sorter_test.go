package spillsort

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"
)

// rows of the tests: a key the sorter orders by, and the position the row
// was added at, which shows the order among equal keys.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
	{Name: "seq", Type: arrow.PrimitiveTypes.Int64, Nullable: false},
}, nil)

func byKey(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int) int {
	return cmp.Compare(a.Column(0).(*array.Int64).Value(i), b.Column(0).(*array.Int64).Value(j))
}

func newTestSorter(t *testing.T, runRows int64, batchRows int) (*Sorter, string) {
	t.Helper()
	dir := t.TempDir()
	return New(Config{
		Schema:    testSchema,
		Compare:   byKey,
		RunRows:   runRows,
		BatchRows: batchRows,
		Dir:       dir,
		FS:        func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil },
	}), dir
}

// batch is the rows keys, numbered from seq on.
func batch(keys []int64, seq int64) arrow.RecordBatch {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	defer kb.Release()
	sb := array.NewInt64Builder(memory.DefaultAllocator)
	defer sb.Release()
	for i, k := range keys {
		kb.Append(k)
		sb.Append(seq + int64(i))
	}
	k, s := kb.NewArray(), sb.NewArray()
	defer k.Release()
	defer s.Release()
	return array.NewRecordBatch(testSchema, []arrow.Array{k, s}, int64(len(keys)))
}

// runFiles is the number of files in dir.
func runFiles(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "icerun-sort-run-*.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(m) {
		t.Fatalf("%s holds %d files, %d of them runs: want runs only", dir, len(all), len(m))
	}
	return len(m)
}

type row struct{ key, seq int64 }

// TestSorterOrder: the rows come out sorted by key, equal keys in the
// order they were added, none lost, in batches of at most BatchRows
// rows, whether the rows fit in one run or spill into many (runs
// written while adding, merged at the end, removed by Release).
func TestSorterOrder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rows, batch int
		runRows     int64
		batchRows   int
		wantRuns    int
		keySpace    int64
	}{
		{"one run in memory", 1000, 100, 5000, 64, 0, 50},
		{"spilled runs", 1000, 100, 250, 64, 3, 50},
		{"run per batch", 1000, 37, 1, 1000, 28, 10},
		{"distinct keys", 5000, 500, 1000, 333, 5, 1 << 40},
		{"one key", 600, 50, 100, 7, 6, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			so, dir := newTestSorter(t, tc.runRows, tc.batchRows)
			r := rand.New(rand.NewPCG(1, 2))
			var want []row
			for lo := 0; lo < tc.rows; lo += tc.batch {
				keys := make([]int64, min(tc.batch, tc.rows-lo))
				for i := range keys {
					keys[i] = r.Int64N(tc.keySpace)
					want = append(want, row{keys[i], int64(lo + i)})
				}
				if err := so.Add(ctx, batch(keys, int64(lo))); err != nil {
					t.Fatalf("Add: %v", err)
				}
			}
			slices.SortStableFunc(want, func(a, b row) int { return cmp.Compare(a.key, b.key) })
			if n := runFiles(t, dir); n != tc.wantRuns {
				t.Errorf("run files after adding = %d, want %d", n, tc.wantRuns)
			}
			var got []row
			err := so.Drain(ctx, func(rec arrow.RecordBatch) error {
				defer rec.Release()
				if n := rec.NumRows(); n == 0 || n > int64(tc.batchRows) {
					t.Errorf("emitted a batch of %d rows, want 1 to %d", n, tc.batchRows)
				}
				k, s := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
				for i := range int(rec.NumRows()) {
					got = append(got, row{k.Value(i), s.Value(i)})
				}
				return nil
			})
			if err != nil {
				t.Fatalf("Drain: %v", err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("Drain emitted %d rows not in stable key order (first %v), want %d (first %v)", len(got), got[:min(5, len(got))], len(want), want[:min(5, len(want))])
			}
			if err := so.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if n := runFiles(t, dir); n != 0 {
				t.Errorf("run files after Release = %d, want 0", n)
			}
		})
	}
}

// TestSorterEmpty: a sorter given no rows emits none.
func TestSorterEmpty(t *testing.T) {
	so, _ := newTestSorter(t, 10, 10)
	err := so.Drain(context.Background(), func(rec arrow.RecordBatch) error {
		rec.Release()
		t.Errorf("Drain emitted a batch of %d rows, want none", rec.NumRows())
		return nil
	})
	if err != nil {
		t.Fatalf("Drain: %v", err)
	}
	if err := so.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// TestSorterReleaseAfterFailure: when the merge stops (a canceled
// context, an emit that fails) or Drain never runs, Release still removes
// every run file, with the context canceled.
func TestSorterReleaseAfterFailure(t *testing.T) {
	errEmit := errors.New("emit failed")
	for _, tc := range []struct {
		name    string
		cancel  bool
		drain   bool
		emitErr error
		want    error
	}{
		{"canceled", true, true, nil, context.Canceled},
		{"emit fails", false, true, errEmit, errEmit},
		{"no drain", true, false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			so, dir := newTestSorter(t, 10, 4)
			for i := range 5 {
				if err := so.Add(ctx, batch([]int64{5, 3, 9, 1, 7, 2, 8, 6, 4, 0}, int64(10*i))); err != nil {
					t.Fatalf("Add: %v", err)
				}
			}
			if n := runFiles(t, dir); n != 5 {
				t.Fatalf("run files = %d, want 5", n)
			}
			if tc.cancel {
				cancel()
			}
			if tc.drain {
				err := so.Drain(ctx, func(rec arrow.RecordBatch) error { rec.Release(); return tc.emitErr })
				if !errors.Is(err, tc.want) {
					t.Errorf("Drain = %v, want %v", err, tc.want)
				}
			}
			if err := so.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if n := runFiles(t, dir); n != 0 {
				t.Errorf("run files after Release = %d, want 0", n)
			}
		})
	}
}

// TestSorterSpillFails: a run that cannot be written fails Add with the
// file IO's error.
func TestSorterSpillFails(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	so := New(Config{
		Schema: testSchema, Compare: byKey, RunRows: 2, BatchRows: 2,
		Dir: notDir,
		FS:  func(context.Context) (iceio.IO, error) { return iceio.LocalFS{}, nil },
	})
	err := so.Add(context.Background(), batch([]int64{2, 1}, 0))
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Add with a file as run folder = %v, want an error wrapping %v", err, syscall.ENOTDIR)
	}
	_ = so.Release(context.Background()) // the recorded run's path cannot exist either
}
