package snapshotcommit

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// MetadataChange is a change of a table's metadata that adds no
// snapshot: a schema change, table properties, a snapshot expiry. The
// [loop] sends it with AssertTableUUID added to its requirements.
type MetadataChange struct {
	Updates      []icetable.Update
	Requirements []icetable.Requirement
	// Landed reports whether md, a table state loaded after an error
	// whose outcome is unknown, holds this change. Nil: never (the
	// outcome then stays unknown on a REST catalog, and is "not applied"
	// on one that answers synchronously).
	Landed func(md icetable.Metadata) bool
	// Written are files written for the change (a checkpoint it names):
	// removed when the change is not applied, kept when it is or may be.
	Written []string
}

// Staged is the change txn stages, as [icetable.Transaction.Commit]
// would send it (its updates and requirements), with landed and the files
// written for it. The transaction itself is not committed.
func Staged(txn *icetable.Transaction, landed func(md icetable.Metadata) bool, written ...string) (*MetadataChange, error) {
	tc, err := txn.TableCommit()
	if err != nil {
		return nil, err
	}
	return &MetadataChange{Updates: tc.Updates, Requirements: tc.Requirements, Landed: landed, Written: written}, nil
}

// MetadataRequest commits a [MetadataChange] planned on each attempt.
// Leave Target.Base nil when Plan reads what the change's requirements do
// not guard (a snapshot expiry frees files by every ref and snapshot):
// every attempt then plans on a state loaded in it.
type MetadataRequest struct {
	Target
	// Plan returns the change on base, the table state of one attempt
	// (main's view), or nil when base already holds it (the result is
	// then Unchanged). It is called again on each attempt's state, so a
	// rerun, or a race another writer won with the same change, commits
	// nothing. Its errors end the loop, except those wrapping
	// iceberg-go's ErrCommitFailed. It must not leave files it wrote
	// behind on error.
	Plan func(ctx context.Context, base *icetable.Table) (*MetadataChange, error)
}

// UpdateMetadata commits mr through the commit loop: its lock, retries
// of conflicts within mr.Policy, and resolution of unknown outcomes by
// the change's Landed. The result's SnapshotID is main's current
// snapshot; no snapshot is added. After the commit, the updates' own
// post-commit work runs, as iceberg-go's Transaction.Commit runs it (the
// file removal of a snapshot expiry staged with WithPostCommit(true)); its
// error is returned, the commit stays.
func UpdateMetadata(ctx context.Context, cat catalog.Catalog, mr MetadataRequest) (commit.Result, error) {
	if mr.Plan == nil {
		return commit.Result{}, fmt.Errorf("%s: %w: no plan", mr.Op, commit.ErrUnsupported)
	}
	mr.Spec = nil
	op := &metadataOp{plan: mr.Plan}
	var after *icetable.Table
	committed := mr.Committed
	mr.Committed = func(tbl *icetable.Table) {
		after = tbl
		if committed != nil {
			committed(tbl)
		}
	}
	l := &loop{cat: cat, t: &mr.Target, op: op}
	res, err := l.run(ctx, commit.Result{})
	if err != nil || after == nil || op.last == nil {
		return res, err
	}
	var perr []error
	for _, u := range op.last.Updates {
		perr = append(perr, u.PostCommit(ctx, op.base, after))
	}
	if err := errors.Join(perr...); err != nil {
		return res, fmt.Errorf("%s: after commit: %w", mr.Op, err)
	}
	return res, nil
}

// metadataOp is the [operation] of a [MetadataRequest].
type metadataOp struct {
	plan func(ctx context.Context, base *icetable.Table) (*MetadataChange, error)
	last *MetadataChange // the change of the latest attempt
	base *icetable.Table // the state it was planned on
}

// validate accepts every state: the plan reads the state it commits on,
// and its requirements make the catalog refuse the commit when it moved.
func (o *metadataOp) validate(context.Context, *icetable.Table) error { return nil }

// apply plans the change on tbl.
func (o *metadataOp) apply(ctx context.Context, tbl *icetable.Table, _ *commit.Result) (*change, error) {
	o.last, o.base = nil, tbl
	mc, err := o.plan(ctx, tbl)
	if err != nil || mc == nil || len(mc.Updates) == 0 {
		return nil, err
	}
	o.last = mc
	var snap int64
	if s := tbl.CurrentSnapshot(); s != nil {
		snap = s.SnapshotID
	}
	return &change{
		reqs:     append([]icetable.Requirement{icetable.AssertTableUUID(tbl.Metadata().TableUUID())}, mc.Requirements...),
		updates:  mc.Updates,
		snapshot: snap,
		written:  mc.Written,
		landed: func(md icetable.Metadata) *icetable.Snapshot {
			if mc.Landed == nil || !mc.Landed(md) {
				return nil
			}
			if s := md.CurrentSnapshot(); s != nil {
				return s
			}
			return &icetable.Snapshot{}
		},
	}, nil
}
