package sink_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// A commit whose catalog call landed but whose answer was lost is found by
// its token, and the sink goes on from where that commit put the source
// partition: its next commit lands, unfenced, on the same sink, and the
// table holds every message once.
func TestSinkGoesOnAfterCommitFoundByToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pol := sink.WithRetry(commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 20 * time.Second})
	run := func(cat *faults.Catalog) error {
		s, err := sink.Open(ctx, cat, []string{"db", "events"}, pol)
		if err != nil {
			return err
		}
		defer s.Close(ctx)
		if _, err := s.Start(ctx, sp0); err != nil {
			return err
		}
		for _, r := range [][2]int64{{0, 3}, {3, 6}, {6, 9}} {
			if err := write(t, s, sp0, r[0], r[1]); err != nil {
				return err
			}
			if _, err := s.Commit(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	count := faults.New(faults.Fail, 0)
	{
		cat, _ := catalogtest.New(t)
		eventsTable(t, cat, "events")
		if err := run(faults.WrapCatalog(cat, count)); err != nil {
			t.Fatal(err)
		}
	}
	commits := 0
	for k, op := range count.Ops() {
		if !strings.HasPrefix(op, "catalog.commit") {
			continue
		}
		commits++
		cat, _ := catalogtest.New(t)
		ident := eventsTable(t, cat, "events")
		in := faults.New(faults.ApplyThenFail, k+1)
		if err := run(faults.WrapCatalog(cat, in)); err != nil {
			t.Errorf("commit lost its answer at op %d (%s): the sink did not go on: %v", k+1, in.Fired(), err)
			continue
		}
		if got, w := ids(t, cat, ident), want(0, 0, 9); !slices.Equal(got, w) {
			t.Errorf("commit lost its answer at op %d (%s): ids = %v, want %v", k+1, in.Fired(), got, w)
		}
	}
	if commits < 3 {
		t.Fatalf("a clean run made %d catalog commits, want 3 or more: %v", commits, count.Ops())
	}
}
