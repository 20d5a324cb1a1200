package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// chaosStream is delivered in three commits; "late" arrives after the
// watermark closed its day and goes to the side table; the message after
// the second batch (offset badOffset) is rejected to the dead-letter
// table.
var chaosStream = [][]msg{
	{{"a", 0, day0.Add(time.Hour)}, {"b", 1, day0.Add(2 * time.Hour)}},
	{{"c", 2, day0.Add(26 * time.Hour)}, {"late", 3, day0.Add(3 * time.Hour)}},
	{{"d", 4, day0.Add(27 * time.Hour)}},
}

const badOffset = 4

// deliverAll runs a sink over chaosStream on cat from the positions the
// table holds, committing after each batch, and stops at the first error
// (a crash: the sink is abandoned, its pending files left behind).
func deliverAll(ctx context.Context, cat catalog.Catalog, ident []string) error {
	s, err := sink.Open(ctx, cat, ident, sink.WithEventTime("event_time", time.Hour), sink.WithDeadLetter(deadIdent),
		sink.WithRetry(commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 20 * time.Second}))
	if err != nil {
		return err
	}
	if _, err := s.Start(ctx, sp0); err != nil {
		return err
	}
	off := int64(0)
	for _, b := range chaosStream {
		offs := make([]int64, len(b))
		for i := range b {
			offs[i] = off
			off++
		}
		rec := batch(b)
		err := s.Write(ctx, sp0, offs, rec)
		rec.Release()
		if err != nil {
			return err
		}
		if off == badOffset {
			if err := s.Reject(ctx, sp0, off, []byte("{bad"), "not JSON"); err != nil {
				return err
			}
			off++
		}
		if _, err := s.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

// TestExactlyOnceUnderEveryFault counts the catalog and file operations of
// a clean run, then for every operation k and every kind of fault crashes
// a run at k and replays the whole stream with a new sink from the
// table's positions: both tables must end with every message exactly once.
func TestExactlyOnceUnderEveryFault(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("every fault: slow")
	}
	ctx := context.Background()
	count := faults.New(faults.Fail, 0)
	{
		cat, _ := catalogtest.New(t)
		ident := eventsTable(t, cat, "events")
		if err := deliverAll(ctx, faults.WrapCatalog(cat, count), ident); err != nil {
			t.Fatal(err)
		}
	}
	n := count.Count()
	t.Logf("a clean run makes %d operations", n)
	for _, kind := range []faults.Kind{faults.Fail, faults.ApplyThenFail, faults.Outage} {
		for k := 1; k <= n; k++ {
			cat, _ := catalogtest.New(t)
			ident := eventsTable(t, cat, "events")
			in := faults.New(kind, k)
			crashErr := deliverAll(ctx, faults.WrapCatalog(cat, in), ident)
			if err := deliverAll(ctx, cat, ident); err != nil {
				t.Fatalf("%s at %d (%s; crash: %v): replay: %v", kind, k, in.Fired(), crashErr, err)
			}
			if got, w := ids(t, cat, ident), []string{"a", "b", "c", "d"}; !slices.Equal(got, w) {
				t.Errorf("%s at %d (%s; crash: %v): table ids = %v, want %v", kind, k, in.Fired(), crashErr, got, w)
			}
			if got, w := ids(t, cat, table.StreamLateTable(ident)), []string{"late"}; !slices.Equal(got, w) {
				t.Errorf("%s at %d (%s; crash: %v): side table ids = %v, want %v", kind, k, in.Fired(), crashErr, got, w)
			}
			if got := deadLetters(t, cat, deadIdent); len(got) != 1 || got[0].offset != badOffset {
				t.Errorf("%s at %d (%s; crash: %v): dead letters = %+v, want offset %d once", kind, k, in.Fired(), crashErr, got, badOffset)
			}
		}
	}
}
