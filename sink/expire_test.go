package sink_test

import (
	"context"
	"errors"
	"testing"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// With snapshot expiry the table keeps a bounded number of snapshots, and
// a restarted sink still finds its positions.
func TestSnapshotExpiryKeepsPositions(t *testing.T) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	if _, err := sink.Open(ctx, cat, ident, sink.WithSnapshotExpiry(0, 0, 1)); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("retain 0: %v, want ErrBadOption", err)
	}
	s, err := sink.Open(ctx, cat, ident, sink.WithCommitRows(1), sink.WithSnapshotExpiry(2, 0, 4))
	if err != nil {
		t.Fatal(err)
	}
	for o := int64(0); o < 12; o++ {
		mustWrite(t, s, sp0, o, o+1)
	}
	if n := catalogtest.Snapshots(t, cat, ident); n > 4 {
		t.Errorf("%d snapshots after 12 commits with expiry every 4 keeping 2, want at most 4", n)
	}
	r, err := sink.Open(ctx, catalogtest.Open(t, dir), ident)
	if err != nil {
		t.Fatal(err)
	}
	start, err := r.Start(ctx, sp0)
	if err != nil || start[sp0] != 11 {
		t.Errorf("Start after expiry = %v, %v; want %s at 11", start, err, sp0)
	}
	if got := ids(t, cat, ident); len(got) != 12 {
		t.Errorf("table holds %d rows, want 12", len(got))
	}
}
