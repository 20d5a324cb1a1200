package table_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// The tests of this file race a publish, or a commit to one ref, with
// another commit that lands between its planning and its catalog commit
// (catalogtest.Interposer).

// TestPublishReplannedBranchDroppedAndExpired: main moved since the
// branch's base, so the publish re-plans the branch's day0 on main; before
// its commit lands, the branch is dropped and its snapshots expired,
// which removes the branch's data files. The publish must not commit a
// main that references them: it re-plans and finds no branch.
func TestPublishReplannedBranchDroppedAndExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	replaceDay(t, open(t, cat, ident, table.WithBranch("audit")), day0, 10)
	replaceDay(t, mw, day0.AddDate(0, 0, 1), 20) // main moves: the publish re-plans
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)

	raced := &catalogtest.Interposer{Catalog: cat, Before: func() {
		other := open(t, cat, ident)
		require.NoError(t, other.DropBranch(ctx, "audit"))
		require.NoError(t, backfill.Expire(ctx, other, 1, 0))
	}}
	_, err := open(t, raced, ident).Publish(ctx, "audit")
	require.Nil(t, raced.Before, "the drop and the expiry ran")
	require.ErrorIs(t, err, commit.ErrNoSuchBranch)
	after, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, mainID, after, "main did not move")
	assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "main reads as it was")
}

// TestPublishAfterBranchHistoryExpired: the branch writes day0 (B1) and
// day1 (B2); expiry keeps only the branch's head, so B1's record of day0
// is gone. The publish cannot tell what the branch wrote: it fails typed,
// forced or not, and main stays as it was (not day1 alone).
func TestPublishAfterBranchHistoryExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	cat, ident, _ := ordersTable(t)
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	replaceDay(t, mw, day1, 30)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	replaceDay(t, bw, day0, 10)
	replaceDay(t, bw, day1, 12)
	require.NoError(t, backfill.Expire(ctx, mw, 1, 0))
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)

	for _, opts := range [][]table.Option{nil, {table.WithForce()}} {
		_, err := open(t, cat, ident, opts...).Publish(ctx, "audit")
		require.ErrorIs(t, err, commit.ErrBranchExpired, "options %d", len(opts))
		assert.NotErrorIs(t, err, commit.ErrPublishConflict)
		after, _ := refs(t, cat, ident, "audit")
		assert.Equal(t, mainID, after, "main did not move")
		assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)))
	}
}

// TestCommitAfterAnotherRefCommitted: a commit to one ref (main or a
// branch) loses its sequence number (and, on v3, its first row id) to a
// commit of the other ref that lands before it. It is a conflict: the
// writer re-plans with fresh numbers and commits on its second attempt.
func TestCommitAfterAnotherRefCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	for _, v := range []int{2, 3} {
		for _, mover := range []string{"main", "branch"} {
			t.Run("v"+strconv.Itoa(v)+"/"+mover+" moves", func(t *testing.T) {
				cat, _ := catalogtest.New(t)
				ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": strconv.Itoa(v)})
				replaceDay(t, open(t, cat, ident), day0, 40)
				replaceDay(t, open(t, cat, ident, table.WithBranch("audit")), day0, 10) // the branch exists

				// The writer under test commits to one ref; the other
				// ref's commit lands first.
				mine, theirs := []table.Option{table.WithBranch("audit")}, []table.Option(nil)
				if mover == "branch" {
					mine, theirs = theirs, mine
				}
				raced := &catalogtest.Interposer{Catalog: cat, Before: func() {
					replaceDay(t, open(t, cat, ident, theirs...), day1, 7)
				}}
				w := open(t, raced, ident, mine...)
				res, err := w.ReplacePartition(ctx, dayKey(t, w, day1), reader(orderdata.Day(day1, 5)))
				require.Nil(t, raced.Before, "the other ref's commit ran")
				require.NoError(t, err)
				assert.Equal(t, 2, res.Attempts, "a conflict, retried once")

				onMain, onBranch := 7, 5 // day1's rows on each ref
				if mover == "branch" {
					onMain, onBranch = onBranch, onMain
				}
				assert.Equal(t, onMain, dayRows(catalogtest.CanonicalScan(t, cat, ident), "2026-07-15"), "main's day1")
				assert.Equal(t, onBranch, dayRows(branchScan(t, cat, ident, "audit"), "2026-07-15"), "the branch's day1")
				assert.Equal(t, 40, dayRows(catalogtest.CanonicalScan(t, cat, ident), "2026-07-14"), "main's day0")
				assert.Equal(t, 10, dayRows(branchScan(t, cat, ident, "audit"), "2026-07-14"), "the branch's day0")
			})
		}
	}
}

// lockWatch is a commit.Locker that records whether every catalog commit
// made through its catalog ran while the lock was held.
type lockWatch struct {
	catalog.Catalog
	held, calls, commits, unlocked atomic.Int64
}

func (l *lockWatch) Lock(context.Context, icetable.Identifier) (func(), error) {
	l.calls.Add(1)
	l.held.Add(1)
	return func() { l.held.Add(-1) }, nil
}

func (l *lockWatch) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	l.commits.Add(1)
	if l.held.Load() == 0 {
		l.unlocked.Add(1)
	}
	return l.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// TestPublishAndDropBranchTakeTheCommitLock: a writer opened
// WithCommitLock holds the lock around every commit it makes, a publish
// (fast-forward and re-planned) and a branch drop included.
func TestPublishAndDropBranchTakeTheCommitLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	lw := &lockWatch{Catalog: cat}
	w := open(t, lw, ident, table.WithCommitLock(lw))
	replaceDay(t, w, day0, 40)
	bw := open(t, lw, ident, table.WithBranch("a"), table.WithCommitLock(lw))
	replaceDay(t, bw, day0, 10)
	replaceDay(t, open(t, lw, ident, table.WithBranch("b"), table.WithCommitLock(lw)), day0.AddDate(0, 0, 1), 10)

	for _, step := range []struct {
		name string
		run  func() error
	}{
		{"fast-forward publish", func() error { _, err := w.Publish(ctx, "a"); return err }},
		{"re-planned publish", func() error { _, err := w.Publish(ctx, "b"); return err }},
		{"drop", func() error { return w.DropBranch(ctx, "a") }},
	} {
		calls, commits := lw.calls.Load(), lw.commits.Load()
		require.NoError(t, step.run(), step.name)
		assert.Greater(t, lw.commits.Load(), commits, "%s: committed", step.name)
		assert.Greater(t, lw.calls.Load(), calls, "%s: took the lock", step.name)
		assert.Zero(t, lw.unlocked.Load(), "%s: committed without the lock", step.name)
	}
	assert.Zero(t, lw.held.Load(), "every lock released")
}

// dayRows counts the rows of a canonical scan on the UTC day date.
func dayRows(scan []byte, date string) int {
	n := 0
	for _, line := range strings.Split(string(scan), "\n") {
		if strings.Contains(line, date) {
			n++
		}
	}
	return n
}

// TestBranchCutFromEmptyTableAfterMainCommitted: a branch cut from an
// empty table makes a snapshot without a parent, which the catalog does
// not check against the table's last sequence number. Main commits twice
// between the cut's planning and its commit: the cut must not land (it
// would set the table's last sequence number back, and no reader could
// load the table again); it is planned again, from main's head.
func TestBranchCutFromEmptyTableAfterMainCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	raced := &catalogtest.Interposer{Catalog: cat, Before: func() {
		mw := open(t, cat, ident)
		replaceDay(t, mw, day0, 40)
		replaceDay(t, mw, day0.AddDate(0, 0, 1), 30)
	}}
	bw := open(t, raced, ident, table.WithBranch("audit"))
	res, err := bw.ReplacePartition(ctx, dayKey(t, bw, day0), reader(orderdata.Day(day0, 10)))
	require.Nil(t, raced.Before, "main's commits ran")
	require.NoError(t, err)
	assert.Equal(t, 2, res.Attempts, "a conflict, retried once")
	_, err = cat.LoadTable(ctx, ident)
	require.NoError(t, err, "the table loads")
	mainID, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, mainID, parentOf(t, cat, ident, res.SnapshotID), "the branch is cut from main's head")
	assert.Equal(t, 10, dayRows(branchScan(t, cat, ident, "audit"), "2026-07-14"))
	assert.Equal(t, 30, dayRows(branchScan(t, cat, ident, "audit"), "2026-07-15"))
	assert.Equal(t, 40, dayRows(catalogtest.CanonicalScan(t, cat, ident), "2026-07-14"))
}

// openHook is a catalog whose tables run Hook once, before the first file
// they open once it is set: a change another writer makes while a call
// reads the files of the state it loaded.
type openHook struct {
	catalog.Catalog
	Hook func()
}

func (c *openHook) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	fsF := func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return hookIO{WriteFileIO: fsys.(iceio.WriteFileIO), c: c}, nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, c), nil
}

type hookIO struct {
	iceio.WriteFileIO
	c *openHook
}

func (h hookIO) Open(name string) (iceio.File, error) {
	if f := h.c.Hook; f != nil {
		h.c.Hook = nil
		f()
	}
	return h.WriteFileIO.Open(name)
}

// TestPublishBranchDroppedAndExpiredWhilePlanning: the branch is dropped
// and its snapshots expired while the publish reads the branch's
// manifests. The publish plans again and finds no branch: a typed error,
// not a missing file.
func TestPublishBranchDroppedAndExpiredWhilePlanning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	replaceDay(t, open(t, cat, ident, table.WithBranch("audit")), day0, 10)
	replaceDay(t, mw, day0.AddDate(0, 0, 1), 20) // main moves: the publish re-plans
	scan := catalogtest.CanonicalScan(t, cat, ident)

	hooked := &openHook{Catalog: cat}
	pw := open(t, hooked, ident)
	hooked.Hook = func() {
		require.NoError(t, mw.DropBranch(ctx, "audit"))
		require.NoError(t, backfill.Expire(ctx, mw, 1, 0))
	}
	_, err := pw.Publish(ctx, "audit")
	require.Nil(t, hooked.Hook, "the drop and the expiry ran")
	require.ErrorIs(t, err, commit.ErrNoSuchBranch)
	assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "main reads as it was")
}
