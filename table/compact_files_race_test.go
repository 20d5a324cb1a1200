package table_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// A writer compacting day0 with Scope CompactFiles in a loop, while another
// writer upserts and deletes keys of day0 merge-on-read: each compaction
// lands or fails with ErrConflict, each row delta that commits is kept, so
// the table ends as the model of the committed upserts and deletes: no
// deleted key back, no key twice, no key lost, and no file left behind.
func TestCompactFilesConcurrentRowDeltas(t *testing.T) {
	t.Parallel()
	const (
		keys   = 300 // the keys of day0 the row deltas pick from
		deltas = 10  // row deltas per format
	)
	all := orderdata.Day(day0, keys)
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident, dir := morTableDir(t, format)
			mw := open(t, cat, ident)
			rows := reader(all[:200])
			_, err := mw.ReplacePartition(ctx, dayKey(t, mw, day0), rows)
			rows.Release()
			require.NoError(t, err)
			model := map[int64]int64{} // order id -> amount, of committed operations only
			for _, o := range all[:200] {
				model[o.ID] = o.Amount
			}
			cw := open(t, cat, ident,
				table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: 0.02, MinSmallFiles: 1000, Scope: table.CompactFiles}),
				table.WithRetry(commit.Policy{Attempts: 2}))
			part := dayKey(t, cw, day0)

			var started, finished atomic.Int64 // Compact calls begun, returned
			var stopped atomic.Bool            // the compactor returned
			var landed, conflicts, unchanged int
			var compactErr error
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				defer stopped.Store(true)
				for {
					select {
					case <-done:
						return
					default:
					}
					started.Add(1)
					res, err := cw.Compact(ctx, part)
					finished.Add(1)
					switch {
					case errors.Is(err, commit.ErrConflict):
						conflicts++
					case err != nil:
						compactErr = err
						return
					case res.Unchanged:
						unchanged++
					default:
						landed++
					}
				}
			})

			rng := rand.New(rand.NewPCG(uint64(format[0]), 7))
			var overlapped, deltaConflicts int
			for round := range deltas {
				// Each delta waits for one more Compact call to end, so the
				// compactor is not starved (under -race a compaction takes
				// several deltas' time); the next one is under way then.
				for prev := finished.Load(); finished.Load() == prev && !stopped.Load(); {
					time.Sleep(time.Millisecond)
				}
				n := 10 + rng.IntN(30)
				picked := make([]orderdata.Order, 0, n)
				for _, i := range rng.Perm(keys)[:n] {
					picked = append(picked, all[i])
				}
				before := finished.Load()
				var err error
				del := rng.IntN(3) == 0
				if del {
					rows := reader(picked)
					_, err = mw.Delete(ctx, part, rows, "order_id")
					rows.Release()
				} else {
					for i := range picked {
						picked[i].Amount = int64(round+1)*1_000_000 + int64(i)
					}
					rows := reader(picked)
					_, err = mw.Upsert(ctx, rows, "order_id")
					rows.Release()
				}
				if errors.Is(err, commit.ErrConflict) {
					deltaConflicts++
					continue
				}
				require.NoError(t, err, "row delta %d (delete %v)", round, del)
				if started.Load() > before {
					overlapped++ // a compaction ran while this delta was planned and committed
				}
				for _, o := range picked {
					if del {
						delete(model, o.ID)
					} else {
						model[o.ID] = o.Amount
					}
				}
			}
			close(done)
			wg.Wait()
			require.NoError(t, compactErr, "Compact, want success or ErrConflict")
			t.Logf("compactions: %d landed, %d conflicts, %d unchanged; row deltas: %d overlapped a compaction, %d conflicts",
				landed, conflicts, unchanged, overlapped, deltaConflicts)
			require.Positive(t, landed, "compactions that landed")
			require.Positive(t, overlapped, "row deltas that landed while a compaction ran")

			got := map[int64][]int64{}
			for _, line := range strings.Split(strings.TrimSpace(string(catalogtest.CanonicalScan(t, cat, ident))), "\n") {
				if line == "" {
					continue
				}
				cells := strings.Split(line, "|")
				id, err := strconv.ParseInt(cells[0], 10, 64)
				require.NoError(t, err, "order id of %q", line)
				amount, err := strconv.ParseInt(cells[2], 10, 64)
				require.NoError(t, err, "amount of %q", line)
				got[id] = append(got[id], amount)
			}
			var wrong []string
			for id, amounts := range got {
				want, ok := model[id]
				switch {
				case !ok:
					wrong = append(wrong, fmt.Sprintf("order %d: rows %v, want none (deleted or never written)", id, amounts))
				case len(amounts) != 1:
					wrong = append(wrong, fmt.Sprintf("order %d: %d rows %v, want one", id, len(amounts), amounts))
				case amounts[0] != want:
					wrong = append(wrong, fmt.Sprintf("order %d: amount %d, want %d", id, amounts[0], want))
				}
			}
			for id, want := range model {
				if _, ok := got[id]; !ok {
					wrong = append(wrong, fmt.Sprintf("order %d (amount %d) lost", id, want))
				}
			}
			if len(wrong) > 0 {
				slices.Sort(wrong)
				t.Errorf("%d orders differ from the committed upserts and deletes, first: %s", len(wrong), strings.Join(wrong[:min(len(wrong), 10)], "; "))
			}
			assert.Empty(t, catalogtest.UnreferencedDataFiles(t, cat, ident, dir), "files left by lost compactions")
		})
	}
}
