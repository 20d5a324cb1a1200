//go:build integration

package integration

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/table"
)

// retention is a ref's retention policy; zero fields are unset.
type retention struct {
	MinSnapshotsToKeep int
	MaxSnapshotAgeMs   int64
	MaxRefAgeMs        int64
}

const day = int64(24 * 3600 * 1000)

// setRetention gives ref (a branch) the retention r through the catalog,
// as another engine (Spark's ALTER TABLE ... RETAIN) would.
func setRetention(t testing.TB, cat catalog.Catalog, ident icetable.Identifier, ref string, r retention) {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	cur, ok := snapshotcommit.Ref(tbl.Metadata(), ref)
	require.True(t, ok, "ref %s", ref)
	_, _, err = cat.CommitTable(context.Background(), ident,
		[]icetable.Requirement{icetable.AssertRefSnapshotID(ref, &cur.SnapshotID)},
		[]icetable.Update{icetable.NewSetSnapshotRefUpdate(ref, cur.SnapshotID, icetable.BranchRef, r.MaxRefAgeMs, r.MaxSnapshotAgeMs, r.MinSnapshotsToKeep)})
	require.NoError(t, err, "set retention of %s", ref)
}

// retentionOf is ref's retention as the catalog holds it.
func retentionOf(t testing.TB, cat catalog.Catalog, ident icetable.Identifier, ref string) retention {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	r, ok := snapshotcommit.Ref(tbl.Metadata(), ref)
	require.True(t, ok, "ref %s", ref)
	var out retention
	if r.MinSnapshotsToKeep != nil {
		out.MinSnapshotsToKeep = *r.MinSnapshotsToKeep
	}
	if r.MaxSnapshotAgeMs != nil {
		out.MaxSnapshotAgeMs = *r.MaxSnapshotAgeMs
	}
	if r.MaxRefAgeMs != nil {
		out.MaxRefAgeMs = *r.MaxRefAgeMs
	}
	return out
}

// TestBranchPublishKeepsRetention creates a branch, writes to it and to
// main, publishes it re-planned on the moved main, then publishes a second
// branch by fast-forward, on every target. Each of these commits sets a
// ref: a catalog that validates refs (Apache Iceberg's REST server refuses
// a negative retention) must take them all, and the retention another
// engine gave main and the branch must survive every one of them.
func TestBranchPublishKeepsRetention(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		ctx := context.Background()
		cat, ident, w := e.loaded(t) // main: day0 holds tag 1
		d := days(3)
		mainRet := retention{MinSnapshotsToKeep: 5, MaxSnapshotAgeMs: 7 * day}
		setRetention(t, cat, ident, icetable.MainBranch, mainRet)

		bw, _ := openWriter(t, e, ident[1], table.WithBranch("audit"))
		replaceDay(t, bw, d[1], 2, 100) // creates the branch from main
		assert.Equal(t, retention{}, retentionOf(t, cat, ident, "audit"), "a new branch has no retention of its own")
		auditRet := retention{MinSnapshotsToKeep: 3, MaxSnapshotAgeMs: 2 * day, MaxRefAgeMs: 30 * day}
		setRetention(t, cat, ident, "audit", auditRet)
		replaceDay(t, bw, d[1], 3, 120)
		assert.Equal(t, auditRet, retentionOf(t, cat, ident, "audit"), "a commit to the branch")

		replaceDay(t, w, d[2], 1, 50) // main moves
		assert.Equal(t, mainRet, retentionOf(t, cat, ident, icetable.MainBranch), "a replace on main")
		pub, err := w.Publish(ctx, "audit")
		require.NoError(t, err)
		assert.NotZero(t, pub.AddedFiles, "publish on a moved main re-plans the branch's writes")
		assert.Equal(t, mainRet, retentionOf(t, cat, ident, icetable.MainBranch), "a re-planned publish")
		assert.Equal(t, map[string]map[string]int{d[0]: {"1": 300}, d[1]: {"3": 120}, d[2]: {"1": 50}}, tagsByDay(t, cat, ident))

		fw, _ := openWriter(t, e, ident[1], table.WithBranch("ff"))
		head, err := replaceTagged(ctx, fw, d[0], 4, 30, "", 0)
		require.NoError(t, err)
		pub, err = w.Publish(ctx, "ff")
		require.NoError(t, err)
		assert.Equal(t, head.SnapshotID, pub.SnapshotID, "publish on an unmoved main fast-forwards to the branch's head")
		assert.Equal(t, mainRet, retentionOf(t, cat, ident, icetable.MainBranch), "a fast-forward publish")
		assert.Equal(t, map[string]map[string]int{d[0]: {"4": 30}, d[1]: {"3": 120}, d[2]: {"1": 50}}, tagsByDay(t, cat, ident))

		require.NoError(t, w.DropBranch(ctx, "ff"))
		require.NoError(t, w.DropBranch(ctx, "audit"))
		assertNoOrphans(t, e, ident)
	})
}
