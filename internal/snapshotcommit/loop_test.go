package snapshotcommit_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// The tests of this file run every operation that commits through the
// commit loop (loop.go) against the loop's three promises: an error whose
// commit landed is found and not committed twice, a lost race is planned
// again and committed once on the new state, and the commit lock is held
// around every commit. They drive the operations through their public
// callers (table.Writer, sink.Sink) on the embedded SQLite catalog.

// loopBranch is the branch of the publish and drop-branch cases.
const loopBranch = "audit"

// loopPolicy keeps a retried conflict quick.
var loopPolicy = commit.Policy{Attempts: 3, MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Timeout: 20 * time.Second}

// loopCase is one operation run through the commit loop, on a v2 table
// whose day0 and day1 hold 50 rows each (100 rows).
type loopCase struct {
	name string
	// setup prepares what the operation needs beyond the fixture.
	setup func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier)
	// run runs the operation on cat, with lock as its commit lock when
	// not nil. It returns the table state its writer holds afterwards
	// (the one its Committed hook kept).
	run func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, lock commit.Locker) (commit.Result, *icetable.Table, error)
	// rival is another writer's commit that makes the operation's
	// first commit lose the race.
	rival func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier)
	// rows are main's rows once the operation committed; rivalRows what
	// the rival adds to them.
	rows, rivalRows int
	// snapshots are the snapshots the operation adds when it commits
	// once on the state it planned on.
	snapshots int
	// holds checks what is not in main's rows (a ref, a manifest layout).
	holds func(t *testing.T, tbl *icetable.Table)
	// noAttempts: the operation's API returns no commit.Result (its
	// second attempt shows in what holds and in the rival's rows).
	noAttempts bool
}

func loopWriter(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, lock commit.Locker, opts ...table.Option) *table.Writer {
	t.Helper()
	opts = append(opts, table.WithParallelWrite(1, 1<<20), table.WithRetry(loopPolicy))
	if lock != nil {
		opts = append(opts, table.WithCommitLock(lock))
	}
	w, err := table.Open(context.Background(), cat, ident, opts...)
	require.NoError(t, err)
	return w
}

// replaceWith replaces day d of ident on branch (main when "") with orders.
func replaceWith(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, branch string, d time.Time, orders []orderdata.Order) {
	t.Helper()
	var opts []table.Option
	if branch != "" {
		opts = append(opts, table.WithBranch(branch))
	}
	replaceDay(t, loopWriter(t, cat, ident, nil, opts...), d, orders)
}

// mainRival replaces day1 on main with 60 rows: 10 more.
func mainRival(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
	replaceWith(t, cat, ident, "", day(1), orderdata.Day(day(1), 60))
}

func loopCases() []loopCase {
	noSetup := func(*testing.T, catalog.Catalog, icetable.Identifier) {}
	onBranch := func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
		replaceWith(t, cat, ident, loopBranch, day0, repriced(orderdata.Day(day0, 80), 7))
	}
	writerRun := func(op func(ctx context.Context, w *table.Writer) (commit.Result, error)) func(*testing.T, catalog.Catalog, icetable.Identifier, commit.Locker) (commit.Result, *icetable.Table, error) {
		return func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, lock commit.Locker) (commit.Result, *icetable.Table, error) {
			w := loopWriter(t, cat, ident, lock)
			res, err := op(context.Background(), w)
			return res, w.Table(), err
		}
	}
	return []loopCase{{
		name:  "replace",
		setup: noSetup,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			k, err := w.Key("event_date=" + day0.Format(time.DateOnly))
			if err != nil {
				return commit.Result{}, err
			}
			return w.ReplacePartition(ctx, k, orderdata.Reader(repriced(orderdata.Day(day0, 80), 7), 256))
		}),
		rival: mainRival, rows: 130, rivalRows: 10, snapshots: 1,
	}, {
		name:  "row delta",
		setup: noSetup,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			k, err := w.Key("event_date=" + day0.Format(time.DateOnly))
			if err != nil {
				return commit.Result{}, err
			}
			return w.Delete(ctx, k, orderdata.Reader(orderdata.Day(day0, 50)[:10], 256), "order_id")
		}),
		rival: mainRival, rows: 90, rivalRows: 10, snapshots: 1,
		holds: func(t *testing.T, tbl *icetable.Table) {
			assert.Equal(t, icetable.OpDelete, tbl.CurrentSnapshot().Summary.Operation, "operation of the row delta's snapshot")
		},
	}, {
		name:  "append",
		setup: noSetup,
		run: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, lock commit.Locker) (commit.Result, *icetable.Table, error) {
			ctx := context.Background()
			opts := []sink.Option{sink.WithRetry(loopPolicy)}
			if lock != nil {
				opts = append(opts, sink.WithCommitLock(lock))
			}
			s, err := sink.Open(ctx, cat, ident, opts...)
			if err != nil {
				return commit.Result{}, nil, err
			}
			rec := orderdata.Batch(orderdata.ArrowSchema(), orderdata.Day(day(2), 5))
			defer rec.Release()
			if err := s.Write(ctx, sink.SourcePartition{Source: "loop"}, []int64{0, 1, 2, 3, 4}, rec); err != nil {
				return commit.Result{}, nil, err
			}
			res, err := s.Commit(ctx)
			return res, s.Table(), err
		},
		rival: mainRival, rows: 105, rivalRows: 10, snapshots: 1,
	}, {
		name:  "rewrite manifests",
		setup: noSetup, // the fixture's two commits left a manifest each
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return w.RewriteManifests(ctx)
		}),
		rival: mainRival, rows: 100, rivalRows: 10, snapshots: 1,
		holds: func(t *testing.T, tbl *icetable.Table) {
			assert.Equal(t, icetable.OpReplace, tbl.CurrentSnapshot().Summary.Operation, "operation of the manifest rewrite's snapshot")
		},
	}, {
		name:  "publish",
		setup: onBranch,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return w.Publish(ctx, loopBranch)
		}),
		rival: mainRival, rows: 130, rivalRows: 10, snapshots: 0, // a fast-forward; re-planned after the rival
	}, {
		name:  "drop branch",
		setup: onBranch,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return commit.Result{}, w.DropBranch(ctx, loopBranch)
		}),
		rival: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) {
			replaceWith(t, cat, ident, loopBranch, day(1), orderdata.Day(day(1), 3)) // moves the branch
		},
		rows: 100, snapshots: 0, noAttempts: true,
		holds: func(t *testing.T, tbl *icetable.Table) {
			_, ok := snapshotcommit.Ref(tbl.Metadata(), loopBranch)
			assert.False(t, ok, "branch %s is still there", loopBranch)
		},
	}, {
		name:  "add columns",
		setup: noSetup,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			ch, err := w.AddColumns(ctx, table.NewColumn{Name: "loop_note", Type: iceberg.PrimitiveTypes.String})
			if err == nil && len(ch.Added) != 1 {
				err = fmt.Errorf("AddColumns added %v, want loop_note", ch.Added)
			}
			return commit.Result{}, err
		}),
		noAttempts: true,
		rival:      mainRival, rows: 100, rivalRows: 10, snapshots: 0,
		holds: func(t *testing.T, tbl *icetable.Table) {
			_, ok := tbl.Schema().FindFieldByName("loop_note")
			assert.True(t, ok, "column loop_note missing from schema %d", tbl.Schema().ID)
			assert.Len(t, tbl.Metadata().Schemas(), 2, "schemas: the change must land once")
			assert.Contains(t, tbl.Properties()[table.SchemaChangePrefix+strconv.Itoa(tbl.Schema().ID)], "add column loop_note", "schema-change note")
		},
	}, {
		name:  "set properties",
		setup: noSetup,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			want := iceberg.Properties{"loop.note": "set"}
			return w.CommitMetadata(ctx, "set loop.note", func(_ context.Context, tbl *icetable.Table) (*table.MetadataChange, error) {
				if tbl.Properties()["loop.note"] == "set" {
					return nil, nil
				}
				txn := tbl.NewTransaction()
				if err := txn.SetProperties(want); err != nil {
					return nil, err
				}
				return table.StagedMetadata(txn, func(md icetable.Metadata) bool { return md.Properties()["loop.note"] == "set" })
			})
		}),
		rival: mainRival, rows: 100, rivalRows: 10, snapshots: 0,
		holds: func(t *testing.T, tbl *icetable.Table) {
			assert.Equal(t, "set", tbl.Properties()["loop.note"], "property loop.note")
		},
	}, {
		name:  "expire snapshots",
		setup: noSetup,
		run: writerRun(func(ctx context.Context, w *table.Writer) (commit.Result, error) {
			return commit.Result{}, backfill.Expire(ctx, w, 1, 0)
		}),
		noAttempts: true,
		rival:      mainRival, rows: 100, rivalRows: 10, snapshots: -1, // the fixture's first snapshot
		holds: func(t *testing.T, tbl *icetable.Table) {
			assert.Len(t, tbl.Metadata().Snapshots(), 1, "snapshots after expiry retaining 1")
			assert.NotEmpty(t, tbl.Properties()[commit.PropertyLineage], "lineage checkpoint of the expiry")
		},
	}}
}

// loopFixture is the v2 table of the cases, with c's setup done.
func loopFixture(t *testing.T, c loopCase) (catalog.Catalog, icetable.Identifier) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "loop", iceberg.Properties{"format-version": "2"})
	replaceWith(t, cat, ident, "", day0, orderdata.Day(day0, 50))
	replaceWith(t, cat, ident, "", day(1), orderdata.Day(day(1), 50))
	c.setup(t, cat, ident)
	return cat, ident
}

// checkLanded checks that c's change is in the table once, and that
// its writer's state is the table's when held is set.
func checkLanded(t *testing.T, c loopCase, cat catalog.Catalog, ident icetable.Identifier, rows int) {
	t.Helper()
	got := strings.Count(string(catalogtest.CanonicalScan(t, cat, ident)), "\n")
	assert.Equal(t, rows, got, "rows of main")
	if c.holds != nil {
		c.holds(t, load(t, cat, ident))
	}
	assert.Empty(t, catalogtest.UnreferencedMetadata(t, cat, ident), "metadata files left by the loop")
}

// TestLoopUnknownOutcome: for every operation, the catalog applies the
// commit and then fails (an answer lost on the way back). The loop finds
// its commit and succeeds, without committing it twice.
func TestLoopUnknownOutcome(t *testing.T) {
	for _, c := range loopCases() {
		t.Run(c.name, func(t *testing.T) {
			// Count the operations up to the commit on one fixture, then
			// inject the lost answer there on a fresh one.
			cat, ident := loopFixture(t, c)
			counter := faults.New(faults.Fail, 0)
			_, _, err := c.run(t, faults.WrapCatalog(cat, counter), ident, nil)
			require.NoError(t, err)
			at := 0
			for i, op := range counter.Ops() {
				if strings.HasPrefix(op, "catalog.commit") {
					at = i + 1
					break
				}
			}
			require.NotZero(t, at, "%s made no catalog commit: %v", c.name, counter.Ops())

			cat, ident = loopFixture(t, c)
			before := catalogtest.Snapshots(t, cat, ident)
			in := faults.New(faults.ApplyThenFail, at)
			res, tbl, err := c.run(t, faults.WrapCatalog(cat, in), ident, nil)
			require.NoError(t, err, "%s after a lost answer at %s", c.name, in.Fired())
			require.True(t, strings.HasPrefix(in.Fired(), "catalog.commit"), "fault fired at %q, want the commit", in.Fired())
			assert.False(t, res.Unchanged, "Result.Unchanged after a commit that landed")
			assert.Equal(t, before+c.snapshots, catalogtest.Snapshots(t, cat, ident), "snapshots: the commit must land once")
			checkLanded(t, c, cat, ident, c.rows)
			// Found by its token, the commit is followed by the Committed
			// hook as an answered one is: the writer goes on from the state
			// that holds it, not from the one it planned on.
			assert.Equal(t, load(t, cat, ident).MetadataLocation(), tbl.MetadataLocation(), "the writer's state after the lost answer (its Committed hook)")
		})
	}
}

// TestLoopLostRace: for every operation, another writer commits between
// the planning of its first attempt and the catalog call. The first
// attempt loses; the second plans on the new state and commits, keeping
// the other writer's change; what the lost attempt wrote is removed.
func TestLoopLostRace(t *testing.T) {
	for _, c := range loopCases() {
		t.Run(c.name, func(t *testing.T) {
			cat, ident := loopFixture(t, c)
			race := &catalogtest.Interposer{Catalog: cat, Before: func() { c.rival(t, cat, ident) }}
			res, _, err := c.run(t, race, ident, nil)
			require.NoError(t, err)
			require.Nil(t, race.Before, "the rival did not run")
			if !c.noAttempts {
				assert.Equal(t, 2, res.Attempts, "Result.Attempts after one lost race")
			}
			checkLanded(t, c, cat, ident, c.rows+c.rivalRows)
		})
	}
}

// countingLock is a commit lock that counts the locks taken and held.
type countingLock struct {
	taken, held atomic.Int32
	refuse      error // when set, Lock fails with it
}

func (l *countingLock) Lock(context.Context, icetable.Identifier) (func(), error) {
	if l.refuse != nil {
		return nil, l.refuse
	}
	l.taken.Add(1)
	l.held.Add(1)
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			l.held.Add(-1)
		}
	}, nil
}

// TestLoopCommitLock: every operation holds the commit lock at its
// catalog call, releases it when it returns, calls its Committed hook
// (its writer holds the state it committed), and commits nothing when
// the lock cannot be taken.
func TestLoopCommitLock(t *testing.T) {
	errRefused := errors.New("lock refused")
	for _, c := range loopCases() {
		t.Run(c.name, func(t *testing.T) {
			cat, ident := loopFixture(t, c)
			lock := &countingLock{}
			heldAtCommit := int32(-1)
			spy := &catalogtest.Interposer{Catalog: cat, Before: func() { heldAtCommit = lock.held.Load() }}
			before := catalogtest.Snapshots(t, cat, ident)
			_, tbl, err := c.run(t, spy, ident, lock)
			require.NoError(t, err)
			assert.Equal(t, int32(1), heldAtCommit, "locks held at the catalog call")
			assert.Zero(t, lock.held.Load(), "locks held after the call")
			assert.Positive(t, lock.taken.Load(), "locks taken")
			assert.Equal(t, before+c.snapshots, catalogtest.Snapshots(t, cat, ident), "snapshots")
			checkLanded(t, c, cat, ident, c.rows)
			assert.Equal(t, load(t, cat, ident).MetadataLocation(), tbl.MetadataLocation(), "the writer's state after the commit (its Committed hook)")

			cat, ident = loopFixture(t, c)
			scan := catalogtest.CanonicalScan(t, cat, ident)
			md := load(t, cat, ident).MetadataLocation()
			_, _, err = c.run(t, cat, ident, &countingLock{refuse: errRefused})
			require.ErrorIs(t, err, errRefused)
			assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "rows after a refused lock")
			assert.Equal(t, md, load(t, cat, ident).MetadataLocation(), "metadata after a refused lock")
		})
	}
}
