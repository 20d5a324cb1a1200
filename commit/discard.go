package commit

import (
	"context"

	icetable "github.com/apache/iceberg-go/table"
)

// discardAttempt removes the manifest list and the manifests that a commit
// attempt wrote before the catalog refused it as a conflict. A conflict
// means nothing was applied, so no table state references them; without
// this every lost race leaves them behind as orphans. Best effort: what
// cannot be removed is left to an orphan cleanup.
func discardAttempt(ctx context.Context, txn *icetable.Transaction, base *icetable.Table) {
	staged, err := txn.StagedTable()
	if err != nil {
		return
	}
	snap := staged.CurrentSnapshot()
	if snap == nil || base.Metadata().SnapshotByID(snap.SnapshotID) != nil {
		return // no new snapshot was staged
	}
	fsys, err := staged.FS(ctx)
	if err != nil {
		return
	}
	if mfs, err := snap.Manifests(fsys); err == nil {
		for _, mf := range mfs {
			if mf.SnapshotID() == snap.SnapshotID {
				_ = fsys.Remove(mf.FilePath())
			}
		}
	}
	_ = fsys.Remove(snap.ManifestList)
}
