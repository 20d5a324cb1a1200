package sink_test

import (
	"context"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// BenchmarkCommitCostOverRun makes 200 commits of 1,000 rows each (one day
// partition, as a stream committing every second for a few minutes) and
// expiring snapshots every 20 commits (keeping 20), and reports the time
// of a commit among the last 50 against the first 50
// (last50/first50: 1.0 is flat; the target is at most 1.2), and
// the manifests of the final snapshot. Ratios within one run only: the
// machine is shared.
func BenchmarkCommitCostOverRun(b *testing.B) {
	ctx := context.Background()
	const commits, rows, window = 200, 1000, 50
	for range b.N {
		b.StopTimer()
		cat, _ := catalogtest.New(b)
		ident := eventsTable(b, cat, "events")
		s, err := sink.Open(ctx, cat, ident, sink.WithSnapshotExpiry(20, 0, 20))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var first, last time.Duration
		for c := range commits {
			ms, offs := messages(0, int64(c*rows), int64((c+1)*rows))
			rec := batch(ms)
			t0 := time.Now()
			if err := s.Write(ctx, sp0, offs, rec); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			rec.Release()
			switch {
			case c < window:
				first += d
			case c >= commits-window:
				last += d
			}
		}
		b.ReportMetric(float64(last)/float64(first), "last50/first50")
		b.ReportMetric(float64(first)/window/1e6, "ms/commit-first50")
		b.ReportMetric(float64(last)/window/1e6, "ms/commit-last50")
		fsys, _ := s.Table().FS(ctx)
		mfs, _ := s.Table().CurrentSnapshot().Manifests(fsys)
		b.ReportMetric(float64(len(mfs)), "manifests")
	}
}
