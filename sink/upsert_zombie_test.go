package sink_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// TestUpsertSinkZombieTombstoneEarly: a fenced sink's tombstone, committed
// before its table commit was refused, deletes the key early: the owner's
// next commit that meets the key deletes its live row (and finds its
// older events stale) before the delete's position is in the table. The
// table then ends as a clean run ends, with the positions of a clean run.
func TestUpsertSinkZombieTombstoneEarly(t *testing.T) {
	t.Parallel()
	evs := []orderEvent{
		{"a", "created", time.Hour}, {"b", "created", time.Hour}, // 0, 1
		{"b", "paid", 2 * time.Hour},    // 2
		{"b", "deleted", 3 * time.Hour}, // 3
		{"a", "paid", 4 * time.Hour},    // 4
	}
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			run := func(t *testing.T, zombie bool) (mid, end map[string]string) {
				cat, dir := catalogtest.New(t)
				ident := ordersTable(t, cat, "orders", m.v, m.mor)
				owner := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
				if zombie {
					z := mustOpen(t, catalogtest.Open(t, dir), ident, sink.WithUpsert(upsertSpec))
					writeEvents(t, z, 0, evs[:4]...)
					writeEvents(t, owner, 0, evs[:2]...)
					mustCommit(t, owner)
					if _, err := z.Commit(ctx); !errors.Is(err, sink.ErrFenced) {
						t.Fatalf("zombie commit: %v, want ErrFenced", err)
					}
					if got := tombstones(t, cat, ident); got != 1 {
						t.Fatalf("tombstones after the fenced commit = %d, want 1 (written before the refusal)", got)
					}
				} else {
					writeEvents(t, owner, 0, evs[:2]...)
					mustCommit(t, owner)
				}
				writeEvents(t, owner, 2, evs[2])
				mustCommit(t, owner)
				mid = states(t, cat, ident)
				writeEvents(t, owner, 3, evs[3:]...)
				mustCommit(t, owner)
				end = states(t, cat, ident)
				tbl, err := cat.LoadTable(ctx, ident)
				if err != nil {
					t.Fatal(err)
				}
				if pos, err := sink.Positions(tbl); err != nil || pos[sp0] != 4 {
					t.Errorf("Positions = %v, %v; want %s at 4", pos, err, sp0)
				}
				return mid, end
			}
			cleanMid, clean := run(t, false)
			zombieMid, end := run(t, true)
			if w := map[string]string{"a": "paid"}; !maps.Equal(clean, w) || !maps.Equal(end, w) {
				t.Errorf("final table: clean run %v, after a zombie %v; want %v for both", clean, end, w)
			}
			if w := map[string]string{"a": "created", "b": "paid"}; !maps.Equal(cleanMid, w) {
				t.Errorf("clean run at position 2 = %v, want %v", cleanMid, w)
			}
			if w := map[string]string{"a": "created"}; !maps.Equal(zombieMid, w) {
				t.Errorf("after a zombie, at position 2 = %v, want %v: b deleted early by the zombie's tombstone", zombieMid, w)
			}
		})
	}
}

// tombstones counts the rows of ident's tombstone table (0 when it does
// not exist).
func tombstones(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, table.TombstoneTable(ident))
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return 0
	}
	arrowTbl, err := tbl.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arrowTbl.Release()
	return int(arrowTbl.NumRows())
}
