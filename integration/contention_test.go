//go:build integration

package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// contentionScale: ICERUN_CONTENTION_ROUNDS rounds per measured writer
// (the target is stated for 1,000; unset skips the measurement,
// minutes long), ICERUN_CONTENTION_VICTIM_ROWS rows per victim replace
// (default 20,000) and ICERUN_CONTENTION_KEEP_SNAPSHOTS, the snapshots a
// maintainer keeps when it expires the others (see maintain; default 64,
// 0: the table keeps every snapshot).
func contentionScale(t *testing.T) (rounds, victimRows, keep int) {
	if os.Getenv("ICERUN_CONTENTION_ROUNDS") == "" {
		t.Skip("a measurement: set ICERUN_CONTENTION_ROUNDS to run it")
	}
	rounds, victimRows, keep = 20, 20000, 64
	for name, v := range map[string]*int{"ICERUN_CONTENTION_ROUNDS": &rounds, "ICERUN_CONTENTION_VICTIM_ROWS": &victimRows, "ICERUN_CONTENTION_KEEP_SNAPSHOTS": &keep} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			require.NoError(t, err, name)
			*v = n
		}
	}
	return rounds, victimRows, keep
}

// maintain expires the table's snapshots but the last keep every 5 s
// until finish is called, through a writer of its own (with the mode's
// commit lock, so it takes its turn like any writer), as a long-running
// deployment does: otherwise every commit parses a metadata.json that
// grows by a snapshot a commit, and latency grows with the run. finish
// stops it and reports its expiries; keep 0 does nothing.
func maintain(t *testing.T, e env, name string, keep int, opts []table.Option) (finish func() string) {
	if keep == 0 {
		return func() string { return "no expiry" }
	}
	w, _ := openWriter(t, e, name, opts...)
	var done, failed atomic.Int64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if err := backfill.Expire(context.Background(), w, keep, 0); err != nil {
				failed.Add(1)
				t.Logf("expire: %v", err)
			} else {
				done.Add(1)
			}
		}
	}()
	var once sync.Once
	finish = func() string {
		once.Do(func() { close(stop) })
		<-stopped
		return fmt.Sprintf("snapshots expired to the last %d every 5 s: %d expiries, %d failed", keep, done.Load(), failed.Load())
	}
	t.Cleanup(func() { finish() })
	return finish
}

// calls collects the outcome of replacements: attempts and latency.
type calls struct {
	mu        sync.Mutex
	attempts  []int
	latency   []time.Duration
	conflicts int
	errs      []error
}

func (c *calls) add(res commit.Result, d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case errors.Is(err, commit.ErrConflict):
		c.conflicts++
	case err != nil:
		c.errs = append(c.errs, err)
	default:
		c.attempts = append(c.attempts, res.Attempts)
		c.latency = append(c.latency, d)
	}
}

// quantiles are p50, p90, p99 and max of xs (nearest rank).
func quantiles[T int | time.Duration](xs []T) [4]T {
	s := slices.Clone(xs)
	slices.Sort(s)
	var q [4]T
	if len(s) == 0 {
		return q
	}
	for i, p := range []float64{0.50, 0.90, 0.99} {
		q[i] = s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
	}
	q[3] = s[len(s)-1]
	return q
}

func (c *calls) report(t *testing.T, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, l := quantiles(c.attempts), quantiles(c.latency)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }
	t.Logf("CONTENTION %s: %d ok, %d ErrConflict, %d other errors; attempts p50/p90/p99/max %d/%d/%d/%d; latency p50/p90/p99/max %s/%s/%s/%s",
		what, len(c.attempts), c.conflicts, len(c.errs), a[0], a[1], a[2], a[3], ms(l[0]), ms(l[1]), ms(l[2]), ms(l[3]))
}

// progressEvery is how often (in rounds) a measurement logs the figures
// so far, so that a run stopped early still tells what it measured.
const progressEvery = 100

// lockModes are the commit lock settings measured on a target: none, and
// the catalog's commit lock (catalogconfig.CommitLock: the advisory lock
// on PostgreSQL, a file lock on SQLite), each writer with its own, as
// separate processes would have.
func lockModes(t *testing.T, e env) map[string]func(t *testing.T) []table.Option {
	modes := map[string]func(t *testing.T) []table.Option{"optimistic": func(*testing.T) []table.Option { return nil }}
	name := map[string]string{"pg": "pg-lock", "sqlite": "file-lock"}[e.Target]
	if name != "" {
		modes[name] = func(t *testing.T) []table.Option {
			lock, closeLock, err := catalogconfig.CommitLock(e.Props)
			require.NoError(t, err)
			t.Cleanup(func() { _ = closeLock() })
			return []table.Option{table.WithCommitLock(lock)}
		}
	}
	return modes
}

// TestContention measures progress under contention with the default retry
// budget: one writer replacing day 1 in a tight loop while a victim replaces
// day 0 (a large input), and 8 writers replacing 8 partitions, each round
// at once. It prints attempts and latency distributions. With the commit
// lock it fails on any ErrConflict or a p99 above 4 attempts; optimistic
// commits have no such bound (see the README), their figures are printed
// only.
//
//	ICERUN_CONTENTION_ROUNDS=1000 scripts/integration pg -- go test -tags integration -run TestContention -v -timeout 2h ./integration/
func TestContention(t *testing.T) {
	rounds, victimRows, keep := contentionScale(t)
	eachTarget(t, func(t *testing.T, e env) {
		if e.Target != "sqlite" && e.Target != "pg" {
			t.Skip("contention runs on the SQL catalogs")
		}
		for _, mode := range []string{"optimistic", "pg-lock", "file-lock"} {
			opts, ok := lockModes(t, e)[mode]
			if !ok {
				continue
			}
			t.Run(mode+"/hot+victim", func(t *testing.T) {
				cat := e.catalog(t)
				name := "hot_" + randomID()
				e.ordersTable(t, cat, name)
				hot, _ := openWriter(t, e, name, opts(t)...)
				victim, _ := openWriter(t, e, name, opts(t)...)
				var stop atomic.Bool
				var hotCalls, victimCalls calls
				maint := maintain(t, e, name, keep, opts(t))
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; !stop.Load(); i++ {
						start := time.Now()
						res, err := replaceTagged(context.Background(), hot, days(2)[1], i, 100, "", 0)
						hotCalls.add(res, time.Since(start), err)
					}
				}()
				for r := range rounds {
					start := time.Now()
					res, err := replaceTagged(context.Background(), victim, days(1)[0], r, victimRows, "", 0)
					victimCalls.add(res, time.Since(start), err)
					if (r+1)%progressEvery == 0 && r+1 < rounds {
						victimCalls.report(t, fmt.Sprintf("%s/%s victim (%d rows) after %d rounds", e.Target, mode, victimRows, r+1))
					}
				}
				stop.Store(true)
				<-done
				t.Logf("CONTENTION %s/%s hot+victim: %s", e.Target, mode, maint())
				victimCalls.report(t, fmt.Sprintf("%s/%s victim (%d rows) x %d", e.Target, mode, victimRows, rounds))
				hotCalls.report(t, fmt.Sprintf("%s/%s hot writer (100 rows)", e.Target, mode))
				check(t, mode, &victimCalls)
				check(t, mode, &hotCalls)
			})
			t.Run(mode+"/8x8", func(t *testing.T) {
				cat := e.catalog(t)
				name := "eight_" + randomID()
				e.ordersTable(t, cat, name)
				const writers = 8
				var all calls
				maint := maintain(t, e, name, keep, opts(t))
				var wg sync.WaitGroup
				for i := range writers {
					w, _ := openWriter(t, e, name, opts(t)...)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for r := range rounds {
							start := time.Now()
							res, err := replaceTagged(context.Background(), w, days(writers)[i], r, 200, "", 0)
							all.add(res, time.Since(start), err)
							if i == 0 && (r+1)%progressEvery == 0 && r+1 < rounds {
								all.report(t, fmt.Sprintf("%s/%s 8 writers x 8 partitions, writer 0 after %d rounds", e.Target, mode, r+1))
							}
						}
					}()
				}
				wg.Wait()
				t.Logf("CONTENTION %s/%s 8x8: %s", e.Target, mode, maint())
				all.report(t, fmt.Sprintf("%s/%s 8 writers x 8 partitions x %d", e.Target, mode, rounds))
				check(t, mode, &all)
			})
		}
	})
}

func check(t *testing.T, mode string, c *calls) {
	t.Helper()
	for _, err := range c.errs {
		t.Errorf("replace: %v", err)
	}
	if mode != "optimistic" {
		assert.Zero(t, c.conflicts, "ErrConflict within the default budget with the commit lock")
		assert.LessOrEqual(t, quantiles(c.attempts)[2], 4, "p99 attempts with the commit lock")
	}
}

// TestPostgresLockWaitsPastOneSlice: a writer waiting for the commit lock
// longer than one lock_timeout slice (5 s) keeps waiting and gets it once
// the holder releases it, instead of failing (or hitting the driver's
// read timeout on one long call).
func TestPostgresLockWaitsPastOneSlice(t *testing.T) {
	uri := os.Getenv("ICERUN_PG_URI")
	if uri == "" {
		if required("pg") {
			t.Fatal("ICERUN_PG_URI is not set")
		}
		t.Skip("ICERUN_PG_URI is not set")
	}
	db, err := sql.Open(pgDriver, uri)
	require.NoError(t, err)
	defer db.Close()
	lock := commit.PostgresLock(db)
	ident := []string{"it_" + randomID(), "locked"}
	unlock, err := lock.Lock(context.Background(), ident)
	require.NoError(t, err)
	released := make(chan struct{})
	go func() {
		time.Sleep(7 * time.Second)
		close(released)
		unlock()
	}()
	unlock2, err := lock.Lock(context.Background(), ident)
	require.NoError(t, err, "waiting past one 5 s slice")
	select {
	case <-released:
	default:
		t.Fatal("got the lock while another session held it")
	}
	unlock2()
}
