package backfill_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// A key is skipped only when its code version and its input identity
// match the lineage: after one day's input is corrected, a rerun with the
// same code version runs that day again, and only that day.
func TestInputIdentityNoticesCorrectedInput(t *testing.T) {
	ctx := context.Background()
	_, _, w, ks := setup(t, table.WithCodeVersion("v1"))
	ks = ks[:4]
	var mu sync.Mutex
	version := map[string]string{} // key -> identity of its input
	identity := func(_ context.Context, k partition.Key) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return "input-" + version[k.String()], nil
	}
	rep, err := backfill.Run(ctx, w, ks, orders, backfill.WithInputIdentity(identity))
	require.NoError(t, err)
	require.Equal(t, 4, rep.Written)
	require.Equal(t, "input-", table.LastWrites(w.Table(), []string{ks[0].String()})[ks[0].String()].Input, "the lineage records the identity")

	rep, err = backfill.Run(ctx, w, ks, orders, backfill.WithInputIdentity(identity))
	require.NoError(t, err)
	require.Equal(t, 4, rep.Skipped, "same code, same input: done")

	mu.Lock()
	version[ks[2].String()] = "corrected"
	mu.Unlock()
	var calls atomic.Int32
	counting := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		calls.Add(1)
		return orders(ctx, k)
	}
	rep, err = backfill.Run(ctx, w, ks, counting, backfill.WithInputIdentity(identity))
	require.NoError(t, err)
	require.Equal(t, 3, rep.Skipped)
	require.Equal(t, int32(1), calls.Load(), "only the corrected key runs")

	// Without identities, the code version alone decides (documented).
	rep, err = backfill.Run(ctx, w, ks, orders)
	require.NoError(t, err)
	require.Equal(t, 4, rep.Skipped)
}

// identified is a job reader that knows its input's identity.
type identified struct {
	array.RecordReader
	id string
}

func (r identified) InputIdentity(string) string { return r.id }

// A Job's reader that implements table.InputIdentifier has its identity
// recorded, in a group of several keys too.
func TestJobReaderIdentityRecorded(t *testing.T) {
	ctx := context.Background()
	_, _, w, ks := setup(t)
	ks = ks[:4]
	job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		rows, err := orders(ctx, k)
		return identified{rows, "snapshot-of-" + k.String()}, err
	}
	_, err := backfill.Run(ctx, w, ks, job, backfill.WithKeysPerSnapshot(2))
	require.NoError(t, err)
	texts := []string{ks[0].String(), ks[3].String()}
	last := table.LastWrites(w.Table(), texts)
	for _, k := range texts {
		require.Equal(t, "snapshot-of-"+k, last[k].Input)
	}
}

// Deterministic errors are not retried; transient ones are.
func TestDeterministicErrorsNotRetried(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		err      error
		attempts int
	}{
		{fmt.Errorf("read input: %w", os.ErrNotExist), 1},
		{fmt.Errorf("bad column: %w", schema.ErrMissingRequired), 1},
		{fmt.Errorf("open: %w", os.ErrPermission), 1},
		{fmt.Errorf("upstream unavailable"), 3},
	}
	for _, tc := range tests {
		t.Run(tc.err.Error(), func(t *testing.T) {
			_, _, w, ks := setup(t)
			job := func(context.Context, partition.Key) (array.RecordReader, error) { return nil, tc.err }
			rep, err := backfill.Run(ctx, w, ks[:1], job, backfill.WithRetries(2))
			require.ErrorIs(t, err, backfill.ErrKeysFailed)
			require.Len(t, rep.Failed, 1)
			require.Equal(t, tc.attempts, rep.Failed[0].Attempts)
		})
	}
}

// A run that has nothing to do commits nothing: no new metadata.json.
func TestNothingToDoWritesNoMetadata(t *testing.T) {
	ctx := context.Background()
	_, _, w, ks := setup(t, table.WithCodeVersion("v1"))
	for _, k := range ks[:2] {
		rows, err := orders(ctx, k)
		require.NoError(t, err)
		_, err = w.ReplacePartition(ctx, k, rows)
		rows.Release()
		require.NoError(t, err)
	}
	before := w.Table().MetadataLocation()
	rep, err := backfill.Run(ctx, w, ks[:2], orders)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Skipped)
	tbl, err := w.Refresh(ctx)
	require.NoError(t, err)
	require.Equal(t, before, tbl.MetadataLocation())
}
