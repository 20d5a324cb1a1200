package table

import (
	"context"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// MetadataChange is a change of table metadata that adds no snapshot (a
// maintenance change: table properties, a snapshot expiry), for
// [Writer.CommitMetadata]. [StagedMetadata] makes one of a transaction.
type MetadataChange = snapshotcommit.MetadataChange

// StagedMetadata is the change txn stages, as its Commit would send it,
// with landed (which finds it in a table state after an error whose
// outcome is unknown) and the files written for it (removed when it is
// not applied). txn itself is not committed.
func StagedMetadata(txn *icetable.Transaction, landed func(md icetable.Metadata) bool, written ...string) (*MetadataChange, error) {
	return snapshotcommit.Staged(txn, landed, written...)
}

// CommitMetadata commits the change plan returns through the commit loop,
// in this writer's commit turn and, per attempt, under its commit lock
// ([WithCommitLock]): plan is called on each attempt's table state and
// returns nil when the state holds the change already (the result is
// then Unchanged). Conflicts are retried within the writer's policy; an
// error whose outcome is unknown is resolved by the change's Landed.
// Every attempt plans on a state loaded in it, never on [Writer.Table]:
// a plan may read what its requirements do not guard (the refs and
// snapshots an expiry frees files by). op names the change in errors.
// Do not call it from a goroutine that
// holds [Writer.LockCommits].
func (w *Writer) CommitMetadata(ctx context.Context, op string, plan func(ctx context.Context, base *icetable.Table) (*MetadataChange, error)) (commit.Result, error) {
	w.commitTurn.lock()
	defer w.commitTurn.unlock()
	t := w.target("table: " + w.name + ": " + op)
	return snapshotcommit.UpdateMetadata(ctx, w.cat, snapshotcommit.MetadataRequest{Target: t, Plan: plan})
}
