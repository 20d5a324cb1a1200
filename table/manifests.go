package table

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// RewriteManifests rewrites the manifests of main's current snapshot into
// manifests clustered by partition, at most snapshotcommit.ManifestEntries
// live entries each, as Java's RewriteManifests (Spark's
// rewrite_manifests) does: one snapshot of operation "replace" whose data
// and delete files, rows and row ids are the parent's. A table whose
// manifests are already as few as their entries need (icerun's own
// commits keep them so) is left as it is: the result is Unchanged and no
// snapshot is made. It is for tables that other engines' many small
// commits left with many small manifests, which every scan plan reads.
//
// A concurrent commit is a conflict like any other: the rewrite is planned
// again on the new state and retried under the writer's policy, holding
// its commit lock. A writer on a branch fails with commit.ErrUnsupported.
func (w *Writer) RewriteManifests(ctx context.Context) (commit.Result, error) {
	op := fmt.Sprintf("table: rewrite manifests of %s", w.name)
	return w.observed(ctx, opRewriteManifests, op, func(ctx context.Context) (commit.Result, error) {
		return w.rewriteManifests(ctx, op)
	})
}

func (w *Writer) rewriteManifests(ctx context.Context, op string) (commit.Result, error) {
	if w.cfg.branch != "" {
		return commit.Result{}, fmt.Errorf("%s: %w: manifests of branch %s (main's only)", op, commit.ErrUnsupported, w.cfg.branch)
	}
	tbl, err := w.head(ctx)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := snapshotcommit.Supported(tbl.Metadata()); err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	w.commitTurn.lock()
	t := w.target(op)
	t.TableUUID = tbl.Metadata().TableUUID().String()
	res, err := snapshotcommit.RewriteManifests(ctx, w.cat, snapshotcommit.ManifestsRequest{Target: t})
	w.commitTurn.unlock()
	return res, err
}
