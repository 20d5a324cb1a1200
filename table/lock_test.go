package table_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// processLock is a commit.Locker for writers of one process: what
// commit.PostgresLock does across processes (integration/contention_test.go
// runs that one).
type processLock struct {
	mu    sync.Mutex
	held  atomic.Bool
	calls atomic.Int64
}

func (l *processLock) Lock(ctx context.Context, ident icetable.Identifier) (func(), error) {
	l.mu.Lock()
	l.held.Store(true)
	l.calls.Add(1)
	return func() { l.held.Store(false); l.mu.Unlock() }, nil
}

// TestCommitLockOneAttemptEach: 8 writers (8 Writer values, as 8
// processes would have) replace 8 partitions at once, 3 rounds; with a
// shared commit lock every replacement commits on its first attempt, and
// every attempt took the lock.
func TestCommitLockOneAttemptEach(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	lock := &processLock{}
	const writers, rounds = 8, 3
	var wg sync.WaitGroup
	results := make([][]commit.Result, writers)
	errs := make([]error, writers)
	for i := range writers {
		w := open(t, cat, ident, table.WithCommitLock(lock))
		d := day0.AddDate(0, 0, i)
		k := dayKey(t, w, d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				orders := orderdata.Day(d, 200)
				for j := range orders {
					orders[j].Amount = int64(r)
				}
				rows := orderdata.Reader(orders, 100)
				res, err := w.ReplacePartition(context.Background(), k, rows)
				rows.Release()
				if err != nil {
					errs[i] = err
					return
				}
				results[i] = append(results[i], res)
			}
		}()
	}
	wg.Wait()
	var attempts int64
	for i := range writers {
		require.NoError(t, errs[i], "writer %d", i)
		for r, res := range results[i] {
			assert.Equal(t, 1, res.Attempts, "writer %d round %d: attempts with the commit lock", i, r)
			attempts += int64(res.Attempts)
		}
	}
	assert.Equal(t, attempts, lock.calls.Load(), "every attempt takes the lock")
	assert.False(t, lock.held.Load(), "lock released")
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), writers*rounds, "one snapshot per replacement")
}

func TestWithCommitLockNil(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	_, err := table.Open(context.Background(), cat, ident, table.WithCommitLock(nil))
	require.ErrorIs(t, err, table.ErrBadOption)
}

// TestLockCommitsHoldsTheWritersOwnCommits: while LockCommits is held, a
// replacement by the same writer from another goroutine writes its files
// but does not commit, so a maintenance commit made in the meantime (here:
// a table property) never races it; once released, the replacement lands.
func TestLockCommitsHoldsTheWritersOwnCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	k := dayKey(t, w, day0)
	unlock, err := w.LockCommits(ctx)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		rows := orderdata.Reader(orderdata.Day(day0, 50), 16)
		defer rows.Release()
		_, err := w.ReplacePartition(ctx, k, rows)
		done <- err
	}()
	select {
	case err := <-done:
		unlock()
		t.Fatalf("the replacement ended while its writer's commits were held: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	require.Nil(t, tbl.CurrentSnapshot(), "nothing committed while held")
	txn := tbl.NewTransaction()
	require.NoError(t, txn.SetProperties(iceberg.Properties{"maintenance": "done"}))
	_, err = txn.Commit(ctx)
	require.NoError(t, err, "the maintenance commit does not race the writer's own")
	unlock()
	require.NoError(t, <-done)
	tbl, err = cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	assert.Equal(t, "done", tbl.Properties()["maintenance"])
	assert.Len(t, tbl.Metadata().Snapshots(), 1)
}

// TestLockCommitsGivesUpWithTheContext: a LockCommits waiting for the
// writer's turn returns commit.ErrLock and the context's error when the
// context ends.
func TestLockCommitsGivesUpWithTheContext(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	unlock, err := w.LockCommits(context.Background())
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = w.LockCommits(ctx)
	require.ErrorIs(t, err, commit.ErrLock)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
