package sink_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// liveDataFiles is the number of live data files of the table.
func liveDataFiles(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return 0
	}
	tasks, err := tbl.Scan().PlanFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks)
}

// A stream without event time, committing many small batches, keeps its
// data file count bounded as it goes (unpartitioned, and in one open
// partition of a partitioned table), keyed or not, with every row once.
func TestSmallFilesCompactedAsTheyGo(t *testing.T) {
	t.Parallel()
	const files, per = 4, 5
	commits := int64(30)
	if testing.Short() {
		commits = 12 // still three compactions' worth of small files
	}
	for name, tc := range map[string]struct {
		table func(testing.TB, catalog.Catalog, string) icetable.Identifier
		opts  []sink.Option
	}{
		"unpartitioned":       {flatEventsTable, nil},
		"unpartitioned keyed": {flatEventsTable, []sink.Option{sink.WithKey("id")}},
		"one day partition":   {eventsTable, nil},
	} {
		t.Run(name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := tc.table(t, cat, "events")
			s := mustOpen(t, cat, ident, append(tc.opts, sink.WithSmallFileCompaction(files, 0))...)
			most := 0
			for c := range int64(commits) {
				mustWrite(t, s, sp0, c*per, (c+1)*per)
				mustCommit(t, s)
				most = max(most, liveDataFiles(t, cat, ident))
			}
			if most > files {
				t.Errorf("data files reached %d over %d commits, want at most %d", most, commits, files)
			}
			if st := s.Stats(); st.Compactions < commits/files || st.MaintenanceFailures != 0 {
				t.Errorf("stats = %+v; want at least %d compactions, no failure", st, commits/files)
			}
			if got, w := ids(t, cat, ident), want(0, 0, commits*per); !slices.Equal(got, w) {
				t.Errorf("table holds %d ids, want %d, each once", len(got), len(w))
			}
		})
	}
}

// In keyed mode a compacted partition still dedupes: a key committed
// before the compaction, sent again after it, is dropped.
func TestSmallFileCompactionKeepsKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := flatEventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithKey("id"), sink.WithSmallFileCompaction(2, 0))
	for i := range int64(4) {
		rec := batch([]msg{{fmt.Sprintf("k%d", i), i, day0}})
		if err := s.Write(ctx, sp0, []int64{i}, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		mustCommit(t, s)
	}
	if st := s.Stats(); st.Compactions == 0 {
		t.Fatalf("no compaction: %+v", st)
	}
	rec := batch([]msg{{"k0", 9, day0}, {"k5", 10, day0}})
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{9, 10}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if got, w := ids(t, cat, ident), []string{"k0", "k1", "k2", "k3", "k5"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

func TestSmallFileCompactionOptionChecked(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := flatEventsTable(t, cat, "events")
	for _, tc := range []struct {
		files int
		bytes int64
	}{{1, 0}, {0, 0}, {4, -1}} {
		if _, err := sink.Open(context.Background(), cat, ident, sink.WithSmallFileCompaction(tc.files, tc.bytes)); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("WithSmallFileCompaction(%d, %d) = %v, want ErrBadOption", tc.files, tc.bytes, err)
		}
	}
}

// Files at or above the small-file size are not counted: a stream whose
// files are all full (here: small is under 1 byte) is never compacted.
func TestSmallFileCompactionCountsSmallFilesOnly(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := flatEventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithSmallFileCompaction(2, 1))
	for c := range int64(6) {
		mustWrite(t, s, sp0, c*5, (c+1)*5)
		mustCommit(t, s)
	}
	if st := s.Stats(); st.Compactions != 0 {
		t.Errorf("compactions = %d, want 0: no file is under 1 byte", st.Compactions)
	}
	if n := liveDataFiles(t, cat, ident); n != 6 {
		t.Errorf("data files = %d, want 6", n)
	}
}
