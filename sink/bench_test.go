package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/cputime"
	"github.com/icerun/icerun/sink"
)

// BenchmarkCommitCostOverRun makes 1,000 commits of 1,000 rows each (one
// day partition, as a stream committing every second for a quarter of an
// hour), with the sink's default snapshot expiry (20 snapshots kept,
// metadata pruned), keeping 100 snapshots, and without expiry, and
// reports the time of a commit among the last 100 against the first 100
// (last100/first100: 1.0 is flat; the target is at most 1.2) and against
// the second 100 (last100/second100: once the retained snapshots are
// there), the ratio of the medians (less sensitive to the other work
// of a shared machine), the snapshots and manifests of the table at the end. Ratios within one run
// only: the machine is shared.
func BenchmarkCommitCostOverRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts []sink.Option
	}{
		{"default-expiry", nil},
		{"keep-100", []sink.Option{sink.WithSnapshotExpiry(100, 0, sink.DefaultExpireEvery)}},
		{"no-expiry", []sink.Option{sink.WithoutSnapshotExpiry()}},
	} {
		b.Run(bc.name, func(b *testing.B) { commitCostOverRun(b, bc.opts...) })
	}
}

func commitCostOverRun(b *testing.B, opts ...sink.Option) {
	ctx := context.Background()
	const commits, rows, window = 1000, 1000, 100
	for range b.N {
		b.StopTimer()
		cat, _ := catalogtest.New(b)
		ident := eventsTable(b, cat, "events")
		s, err := sink.Open(ctx, cat, ident, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var first, second, last time.Duration
		var firstAll, lastAll []time.Duration
		var firstCPU, lastCPU []time.Duration
		for c := range commits {
			ms, offs := messages(0, int64(c*rows), int64((c+1)*rows))
			rec := batch(ms)
			t0, c0 := time.Now(), cputime.Process()
			if err := s.Write(ctx, sp0, offs, rec); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			d, cpu := time.Since(t0), cputime.Process()-c0
			rec.Release()
			switch {
			case c < window:
				first += d
				firstAll = append(firstAll, d)
				firstCPU = append(firstCPU, cpu)
			case c < 2*window:
				second += d
			case c >= commits-window:
				last += d
				lastAll = append(lastAll, d)
				lastCPU = append(lastCPU, cpu)
			}
		}
		b.ReportMetric(float64(last)/float64(first), "last100/first100")
		b.ReportMetric(float64(last)/float64(second), "last100/second100")
		b.ReportMetric(float64(median(lastAll))/float64(median(firstAll)), "median-last100/first100")
		// CPU time varies less than elapsed time on a shared machine.
		b.ReportMetric(float64(sum(lastCPU))/float64(sum(firstCPU)), "cpu-last100/first100")
		b.ReportMetric(float64(median(lastCPU))/float64(median(firstCPU)), "median-cpu-last100/first100")
		b.ReportMetric(float64(first)/window/1e6, "ms/commit-first100")
		b.ReportMetric(float64(last)/window/1e6, "ms/commit-last100")
		b.ReportMetric(float64(len(s.Table().Metadata().Snapshots())), "snapshots")
		fsys, _ := s.Table().FS(ctx)
		mfs, _ := s.Table().CurrentSnapshot().Manifests(fsys)
		b.ReportMetric(float64(len(mfs)), "manifests")
	}
}

func sum(ds []time.Duration) (s time.Duration) {
	for _, d := range ds {
		s += d
	}
	return s
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
