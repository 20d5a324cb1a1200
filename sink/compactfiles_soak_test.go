package sink_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// soakEnv sets how long TestSmallFilesBoundedOverALongRun runs (such as
// "10m", with go test's -timeout above it); the test runs only when it is
// set.
const soakEnv = "ICERUN_SINK_SOAK"

// An unpartitioned stream without event time, committing a small batch
// at a time for as long as soakEnv says with the default small-file
// compaction, never holds more than DefaultCompactFiles data files, and
// holds every row once at the end.
func TestSmallFilesBoundedOverALongRun(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(soakEnv))
	if err != nil {
		t.Skipf("set %s to a duration (such as 10m) to run it", soakEnv)
	}
	cat, _ := catalogtest.New(t)
	ident := flatEventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident)
	const per = 10
	most, commits := 0, int64(0)
	for start := time.Now(); time.Since(start) < d; commits++ {
		mustWrite(t, s, sp0, commits*per, (commits+1)*per)
		mustCommit(t, s)
		if commits%10 == 9 {
			most = max(most, liveDataFiles(t, cat, ident))
		}
	}
	most = max(most, liveDataFiles(t, cat, ident))
	st := s.Stats()
	t.Logf("%s: %d commits of %d rows, %d compactions, at most %d data files", d, commits, per, st.Compactions, most)
	if most > sink.DefaultCompactFiles {
		t.Errorf("data files reached %d, want at most %d", most, sink.DefaultCompactFiles)
	}
	if got, w := ids(t, cat, ident), want(0, 0, commits*per); !slices.Equal(got, w) {
		t.Errorf("table holds %d ids, want %d, each once", len(got), len(w))
	}
}
