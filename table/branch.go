package table

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// Branch is the branch this writer commits to ([WithBranch]); "" is main.
func (w *Writer) Branch() string { return w.cfg.branch }

// head loads the table and returns it as the writer's branch sees it
// (snapshotcommit.OnBranch): its current snapshot is the branch's head.
func (w *Writer) head(ctx context.Context) (*icetable.Table, error) {
	tbl, err := w.refresh(ctx)
	if err != nil {
		return nil, err
	}
	if err := partition.CheckFieldNames(tbl.Spec()); err != nil {
		return nil, err // iceberg-go's manifest writer cannot record them
	}
	return snapshotcommit.OnBranch(tbl, w.cfg.branch)
}

// Publish makes main hold what the icerun writes on branch made of their
// partitions, in one snapshot on main:
//
//   - when main has not moved since the branch was cut or last
//     published, main's ref moves to the branch's head (fast-forward, no
//     new files);
//   - otherwise the branch's partition replacements are re-planned on
//     main's current state, reusing the branch's data files. If main
//     replaced one of those partitions after the branch's base, the call
//     fails with [commit.ErrPublishConflict] naming them, unless the
//     writer was opened [WithForce];
//   - publishing the same branch again is a no-op (Unchanged).
//
// A re-planned publish carries, with the data files of each partition,
// the position deletes and deletion vectors another engine wrote there on
// the branch; equality deletes are [commit.ErrUnsupported] there. It
// fails with [commit.ErrBranchSpecChanged] when the branch wrote under
// another partition spec than main's current one, and with
// [commit.ErrBranchExpired] when snapshots it needs to tell what the
// branch wrote since its base were expired. Its commit requires the
// branch head it planned from: a branch dropped or moved meanwhile is
// planned again ([commit.ErrNoSuchBranch] once dropped). Commits of other
// writers, on main or on other branches, are conflicts retried like a
// replacement's; with [WithCommitLock] every attempt holds the lock.
//
// The branch is kept; [Writer.DropBranch] removes it. Writes to the
// branch by other engines are published by a fast-forward only, except
// the row-level deletes above.
func (w *Writer) Publish(ctx context.Context, branch string) (commit.Result, error) {
	op := fmt.Sprintf("table: publish branch %s of %s", branch, w.name)
	return w.observed(ctx, opPublish, op, func(ctx context.Context) (commit.Result, error) {
		return w.publish(ctx, op, branch)
	})
}

func (w *Writer) publish(ctx context.Context, op string, branch string) (commit.Result, error) {
	if err := checkBranch(branch); err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	tbl, err := w.refresh(ctx)
	if err == nil {
		err = partition.CheckFieldNames(tbl.Spec()) // as every write: a re-plan writes manifests under main's spec
	}
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	w.commitTurn.lock()
	defer w.commitTurn.unlock()
	return snapshotcommit.Publish(ctx, w.cat, snapshotcommit.PublishRequest{
		Target:  w.target(op),
		Branch:  branch,
		Force:   w.cfg.force,
		Lineage: snapshotcommit.Lineage{RunID: w.cfg.runID, CodeVersion: w.cfg.codeVersion},
		OldSpec: func(spec *partition.Spec, parts []snapshotcommit.Part) snapshotcommit.OldSpecFunc {
			return (&oldSpecs{spec: spec, keys: parts, cfg: w.cfg}).decide
		},
	})
}

// DropBranch removes branch's ref from the table. Its snapshots, and the
// data files only they reference, stay until snapshots are expired. A
// branch that does not exist is [commit.ErrNoSuchBranch]. With
// [WithCommitLock] the commit holds the lock.
func (w *Writer) DropBranch(ctx context.Context, branch string) error {
	op := fmt.Sprintf("table: drop branch %s of %s", branch, w.name)
	if err := checkBranch(branch); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	w.commitTurn.lock()
	defer w.commitTurn.unlock()
	return snapshotcommit.DropBranch(ctx, w.cat, snapshotcommit.DropBranchRequest{Target: w.target(op), Branch: branch})
}

// ReadBranch returns the rows that partition key holds on branch (main
// included), exactly, resolved to the table schema: the audit step of
// write-audit-publish. The caller releases the reader. A branch that does
// not exist is [commit.ErrNoSuchBranch]; a branch without a snapshot
// gives no rows.
func (w *Writer) ReadBranch(ctx context.Context, branch string, key partition.Key) (array.RecordReader, error) {
	op := fmt.Sprintf("table: read branch %s of %s", branch, partName(w.name, key))
	if !key.IsValid() {
		return nil, fmt.Errorf("%s: %w: zero key", op, partition.ErrMalformedKey)
	}
	tbl, err := w.refresh(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	src := Source{Table: tbl, Key: key}
	if branch != icetable.MainBranch {
		ref, ok := snapshotcommit.Ref(tbl.Metadata(), branch)
		if !ok {
			return nil, fmt.Errorf("%s: %w", op, commit.ErrNoSuchBranch)
		}
		if ref.SnapshotRefType != icetable.BranchRef {
			return nil, fmt.Errorf("%s: %w: ref %q is a %s, not a branch", op, commit.ErrUnsupported, branch, ref.SnapshotRefType)
		}
		src.SnapshotID = ref.SnapshotID
	}
	rows, err := readSource(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return rows, nil
}
