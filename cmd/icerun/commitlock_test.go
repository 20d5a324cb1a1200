package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryCommitLock: three processes of the built binary back fill
// their shards of one embedded warehouse at once with -commit-lock. They
// take turns on the file lock beside catalog.db, so none loses a commit
// race; every key is written once.
func TestBinaryCommitLock(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the icerun binary: not in -short")
	}
	wh := warehouse(t)
	in := t.TempDir()
	const days, procs = 9, 3
	for i := range days {
		d := day.AddDate(0, 0, -i)
		parquetFile(t, filepath.Join(in, "event_date="+d.Format(time.DateOnly), "part-0.parquet"), d, 5+i)
	}
	var wg sync.WaitGroup
	outs := make([]string, procs)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, errs := exe(t, in, nil, "backfill", "-warehouse", wh, "-table", "db.fact_orders", "-dir", in,
				"-from", "event_date="+day.AddDate(0, 0, -days+1).Format(time.DateOnly), "-to", "event_date=2026-07-14",
				"-shard", fmt.Sprintf("%d/%d", i, procs), "-commit-lock")
			assert.Equal(t, 0, code, errs)
			outs[i] = out
		}()
	}
	wg.Wait()
	written := 0
	for i, out := range outs {
		assert.Contains(t, out, " 0 commit conflicts re-planned", "process %d: %s", i, out)
		var total, w int
		_, err := fmt.Sscanf(out, "%d keys: %d written", &total, &w)
		require.NoError(t, err, out)
		written += w
	}
	assert.Equal(t, days, written)
	locks, err := filepath.Glob(filepath.Join(wh, "catalog.db.locks", "*.lock"))
	require.NoError(t, err)
	assert.Len(t, locks, 1, "the table's lock file beside catalog.db")

}
