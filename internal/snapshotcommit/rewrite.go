package snapshotcommit

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// RewriteRequest replaces exactly the data files Del with the files Add
// that hold the same rows: a compaction, like Java's RewriteFiles
// (operation "replace"). Unlike [Replace], it removes only the files it
// names, so rows other writers appended to the same partitions meanwhile
// stay.
type RewriteRequest struct {
	Op        string
	Ident     icetable.Identifier
	TableUUID string
	Spec      *partition.Spec
	SchemaID  int
	Del, Add  []iceberg.DataFile
	Token     string
	Policy    commit.Policy
	Lock      commit.Locker
	// Summary, when set, returns more summary properties, computed on
	// every attempt's table state.
	Summary func(tbl *icetable.Table) (iceberg.Properties, error)
}

// Rewrite commits rr. Conflicts are re-planned and retried as [Append]'s;
// when a file of Del is no longer in the table (another compaction took
// it), the call fails without committing and the caller removes Add.
func Rewrite(ctx context.Context, cat catalog.Catalog, rr RewriteRequest) (commit.Result, error) {
	req := &Request{
		Op: rr.Op, Ident: rr.Ident, TableUUID: rr.TableUUID, Spec: rr.Spec, SchemaID: rr.SchemaID,
		Token: rr.Token, Policy: rr.Policy, Lock: rr.Lock, Parts: []Part{{Files: rr.Add}},
	}
	res := commit.Result{AddedFiles: len(rr.Add), DeletedFiles: len(rr.Del)}
	cache := newManifestCache()
	var last *icetable.Table
	return req.run(ctx, cat, res, &last, func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error) {
		props, err := callerSummary(tbl, rr.Summary, rr.Token)
		if err != nil {
			return 0, noRetry(err)
		}
		st, err := stage(ctx, tbl, icetable.MainBranch, KindOverwrite, rr.Del, rr.Add, props, nil, cache)
		if err != nil {
			return 0, noRetry(fmt.Errorf("rewrite: %w", err))
		}
		st.snap.Summary.Operation = icetable.OpReplace // the same rows in other files
		md, loc, err := cat.CommitTable(ctx, rr.Ident, st.reqs, st.updates)
		if err != nil {
			return 0, &catalogError{err: err, discard: func() error { return removeWritten(context.WithoutCancel(ctx), tbl, st.written) }}
		}
		removeOldMetadata(context.WithoutCancel(ctx), tbl, icetable.New(rr.Ident, md, loc, DetachedFS(ctx, tbl), cat))
		return st.snap.SnapshotID, nil
	})
}
