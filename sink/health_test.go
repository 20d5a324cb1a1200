package sink_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// errCatalogDown is the error of a downCatalog's commits.
var errCatalogDown = errors.New("catalog down")

// downCatalog fails every commit while down is set. Safe for concurrent
// use.
type downCatalog struct {
	catalog.Catalog
	down atomic.Bool
}

func (c *downCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.down.Load() {
		return nil, "", errCatalogDown
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

func TestHealthCheck(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)
	interval := 20 * time.Second // three intervals: 60 s, above MinUnhealthyWait
	for _, tc := range []struct {
		name string
		h    sink.Health
		want string // "" healthy
	}{
		{"idle", sink.Health{CommitInterval: interval}, ""},
		{"pending within three intervals", sink.Health{CommitInterval: interval, PendingRows: 5, OldestPending: now.Add(-59 * time.Second)}, ""},
		{"two commits failed", sink.Health{CommitInterval: interval, FailedCommits: 2, LastError: errCatalogDown}, ""},
		{"commit in flight within three intervals", sink.Health{CommitInterval: interval, CommitStarted: now.Add(-59 * time.Second)}, ""},
		{"short interval: the least wait", sink.Health{CommitInterval: time.Second, CommitStarted: now.Add(-29 * time.Second)}, ""},
		{"three commits failed", sink.Health{CommitInterval: interval, FailedCommits: 3, LastError: errCatalogDown}, "the last 3 commits failed: catalog down"},
		{"commit hangs", sink.Health{CommitInterval: interval, CommitStarted: now.Add(-61 * time.Second)}, "a commit in flight for 1m1s (more than 1m0s)"},
		{"short interval: past the least wait", sink.Health{CommitInterval: time.Second, CommitStarted: now.Add(-31 * time.Second)}, "a commit in flight for 31s (more than 30s)"},
		{"rows pending, no commit", sink.Health{CommitInterval: interval, PendingRows: 5, OldestPending: now.Add(-2 * time.Minute)}, "rows pending for 2m0s without a commit"},
	} {
		err := tc.h.Check(now)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Check = %v, want nil", tc.name, err)
		case tc.want != "" && (!errors.Is(err, sink.ErrUnhealthy) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Check = %v, want ErrUnhealthy with %q", tc.name, err, tc.want)
		}
	}
}

// Health follows the sink: rows pending after Write, positions and the
// last commit after a commit that lands, failed commits counted while
// the catalog refuses them (unhealthy after UnhealthyFailures), and all
// well again after the next commit that lands.
func TestHealthFollowsCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base, _ := catalogtest.New(t)
	cat := &downCatalog{Catalog: base}
	ident := eventsTable(t, cat, "events")
	s, err := sink.Open(ctx, cat, ident, sink.WithCommitInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	sp := sink.SourcePartition{Source: "test", Partition: 0}
	write := func(from, to int64) {
		t.Helper()
		ms, offs := messages(0, from, to)
		rec := batch(ms)
		defer rec.Release()
		if err := s.Write(ctx, sp, offs, rec); err != nil {
			t.Fatal(err)
		}
	}
	if h := s.Health(); h.PendingRows != 0 || !h.LastCommit.IsZero() || h.Opened.IsZero() || h.CommitInterval != time.Hour || len(h.Positions) != 0 {
		t.Fatalf("Health after Open = %+v", h)
	}
	write(0, 5)
	if h := s.Health(); h.PendingRows != 5 || h.PendingBytes <= 0 || h.OldestPending.IsZero() {
		t.Fatalf("Health after Write = %+v, want 5 rows pending", h)
	}
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h := s.Health()
	if h.PendingRows != 0 || !h.OldestPending.IsZero() || h.LastCommit.IsZero() || h.Positions[sp] != 4 || h.FailedCommits != 0 {
		t.Fatalf("Health after a commit = %+v, want nothing pending, offset 4", h)
	}
	cat.down.Store(true)
	for i := 1; i <= sink.UnhealthyFailures; i++ {
		if _, err := s.Start(ctx); err != nil { // as a source resumes after a failed commit
			t.Fatal(err)
		}
		write(5, 10)
		if _, err := s.Commit(ctx); !errors.Is(err, errCatalogDown) {
			t.Fatalf("commit %d with the catalog down = %v, want %v", i, err, errCatalogDown)
		}
		h := s.Health()
		if h.FailedCommits != i || !errors.Is(h.LastError, errCatalogDown) || !h.CommitStarted.IsZero() {
			t.Fatalf("Health after %d failed commits = %+v", i, h)
		}
		err := h.Check(time.Now())
		if healthy := i < sink.UnhealthyFailures; healthy != (err == nil) {
			t.Fatalf("Check after %d failed commits = %v", i, err)
		}
	}
	cat.down.Store(false)
	if _, err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	write(5, 10)
	if _, err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if h := s.Health(); h.FailedCommits != 0 || h.LastError != nil || h.Positions[sp] != 9 || h.Check(time.Now()) != nil {
		t.Fatalf("Health after the catalog is back = %+v", h)
	}
}
