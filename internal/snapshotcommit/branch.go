package snapshotcommit

import (
	"context"
	"errors"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// ErrBranchView is returned by a commit attempted through a table that
// [OnBranch] returned: such a view is for reading and planning only.
var ErrBranchView = errors.New("commit: a branch view cannot be committed")

// Ref returns the snapshot ref name (a branch or a tag) of md, and
// whether it exists.
func Ref(md icetable.Metadata, name string) (icetable.SnapshotRef, bool) {
	for n, r := range md.Refs() {
		if n == name {
			return r, true
		}
	}
	return icetable.SnapshotRef{}, false
}

// OnBranch returns tbl as branch sees it: a read-only view whose current
// snapshot is the branch's head, so that scans, planning and lineage
// ([Records]) read the branch's ancestry. For "" and main, and for a branch
// that does not exist yet (it is cut from main's current snapshot on its
// first commit), that is tbl itself. A ref that is a tag is
// [commit.ErrUnsupported]. Committing through the view fails with [ErrBranchView]:
// icerun commits to the branch itself ([Request].Branch).
func OnBranch(tbl *icetable.Table, branch string) (*icetable.Table, error) {
	if branch == "" || branch == icetable.MainBranch {
		return tbl, nil
	}
	ref, ok := Ref(tbl.Metadata(), branch)
	if !ok {
		return tbl, nil
	}
	return atSnapshot(tbl, branch, ref)
}

// atSnapshot returns a read-only view of tbl whose current snapshot is
// ref's; name names ref in errors.
func atSnapshot(tbl *icetable.Table, name string, ref icetable.SnapshotRef) (*icetable.Table, error) {
	if ref.SnapshotRefType != icetable.BranchRef {
		return nil, fmt.Errorf("%w: ref %q is a %s, not a branch", commit.ErrUnsupported, name, ref.SnapshotRefType)
	}
	b, err := icetable.MetadataBuilderFromBase(tbl.Metadata(), "")
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", name, err)
	}
	if err := b.SetSnapshotRef(icetable.MainBranch, ref.SnapshotID, icetable.BranchRef); err != nil {
		return nil, fmt.Errorf("branch %s: %w", name, err)
	}
	md, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("branch %s: %w", name, err)
	}
	return icetable.New(tbl.Identifier(), md, tbl.MetadataLocation(), DetachedFS(context.Background(), tbl), viewCatalog{name: name}), nil
}

// viewCatalog is the catalog of a branch view: it refuses every commit
// (the view's main is not the table's), and plans no scan on a server
// (a server would plan the table's main).
type viewCatalog struct{ name string }

func (c viewCatalog) LoadTable(context.Context, icetable.Identifier) (*icetable.Table, error) {
	return nil, fmt.Errorf("%w: view of branch %s", ErrBranchView, c.name)
}

func (c viewCatalog) CommitTable(context.Context, icetable.Identifier, []icetable.Requirement, []icetable.Update) (icetable.Metadata, string, error) {
	return nil, "", fmt.Errorf("%w: view of branch %s", ErrBranchView, c.name)
}

// ancestors returns the ids of s and its ancestors in md.
func ancestors(md icetable.Metadata, s *icetable.Snapshot) map[int64]bool {
	out := map[int64]bool{}
	for s != nil && !out[s.SnapshotID] {
		out[s.SnapshotID] = true
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}
