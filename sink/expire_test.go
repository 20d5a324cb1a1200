package sink_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// With snapshot expiry the table keeps a bounded number of snapshots, and
// a restarted sink still finds its positions.
func TestSnapshotExpiryKeepsPositions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	if _, err := sink.Open(ctx, cat, ident, sink.WithSnapshotExpiry(0, 0, 1)); !errors.Is(err, sink.ErrBadOption) {
		t.Errorf("retain 0: %v, want ErrBadOption", err)
	}
	s := mustOpen(t, cat, ident, sink.WithCommitRows(1), sink.WithSnapshotExpiry(2, 0, 4))
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

// When expiry leaves no snapshot that records the positions (another
// writer's snapshots came after the sink's), they come from the table
// property every sink commit sets.
func TestPositionsSurviveExpiryOfEverySinkSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s := mustOpen(t, cat, ident, sink.WithCommitRows(1))
	for o := int64(0); o < 3; o++ {
		mustWrite(t, s, sp0, o, o+1)
	}
	// Another writer appends twice, without positions.
	for o := int64(100); o < 102; o++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := messages(7, o, o+1)
		rec := batch(ms)
		rdr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.Append(ctx, rdr, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		rec.Release()
	}
	w, err := table.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	if err := backfill.Expire(ctx, w, 1, 0); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	for _, snap := range tbl.Metadata().Snapshots() {
		if _, ok := snap.Summary.Properties[sink.SummaryPositions]; ok {
			t.Fatalf("snapshot %d still records the positions", snap.SnapshotID)
		}
	}
	r := mustOpen(t, cat, ident)
	if start, err := r.Start(ctx, sp0); err != nil || start[sp0] != 2 {
		t.Errorf("Start = %v, %v; want %s at 2", start, err, sp0)
	}
}
