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

// AppendRequest adds data files to a table without removing any: a fast
// append, like Java's AppendFiles. The new files go to new manifests; the
// table's manifests are kept as they are (small ones are merged as
// [Replace]'s commits merge them), so the cost of an append follows what
// it adds, not the table.
type AppendRequest struct {
	Op        string // names the operation in errors
	Ident     icetable.Identifier
	TableUUID string // the table the files were written for
	Spec      *partition.Spec
	SchemaID  int // the schema the files were written with
	Files     []iceberg.DataFile
	Token     string // unique per call; recorded as SummaryCommitToken
	Policy    commit.Policy
	Lock      commit.Locker // held around every attempt, as [Request].Lock
	// Base, when set, is the table state the first attempt plans on
	// instead of loading the table (as [Request].Base): the caller's
	// last committed state, when it expects no other writer in between.
	Base *icetable.Table
	// Summary, when set, returns the summary properties of the snapshot,
	// computed on every attempt from the table state it commits on (a
	// streaming sink merges its source positions into the ones the
	// table holds, and fails when another writer took them). An error
	// stops the loop and is returned wrapped with Op; nothing is
	// committed.
	Summary func(tbl *icetable.Table) (iceberg.Properties, error)
	// TableProperties, when set, returns table properties to set in the
	// same commit, computed on every attempt after Summary.
	TableProperties func(tbl *icetable.Table) (iceberg.Properties, error)
	// Committed, when set, is called with the table state the commit
	// produced.
	Committed func(tbl *icetable.Table)
	// Attempted, when set, is called after every attempt with its number
	// and error.
	Attempted func(attempt int, err error)
}

// Append commits ar: one snapshot (operation "append") that adds ar.Files
// to main. Conflicts with concurrent commits are re-planned on the new
// state and retried within ar.Policy; an error that may have been applied
// is resolved by ar.Token, as [Replace] does (see the package
// documentation).
//
// On error the caller owns the files: it removes them, except after an
// *UnknownOutcomeError.
func Append(ctx context.Context, cat catalog.Catalog, ar AppendRequest) (commit.Result, error) {
	req := &Request{
		Op: ar.Op, Ident: ar.Ident, TableUUID: ar.TableUUID, Spec: ar.Spec, SchemaID: ar.SchemaID,
		Token: ar.Token, Policy: ar.Policy, Lock: ar.Lock, Committed: ar.Committed, Attempted: ar.Attempted,
		Base:  ar.Base,
		Parts: []Part{{Files: ar.Files}}, // for the paths an unknown outcome reports
	}
	var res commit.Result
	for _, f := range ar.Files {
		res.AddedRows += f.Count()
	}
	res.AddedFiles = len(ar.Files)
	cache := newManifestCache()
	var last *icetable.Table
	return req.run(ctx, cat, res, &last, func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error) {
		props, err := callerSummary(tbl, ar.Summary, ar.Token)
		if err != nil {
			return 0, noRetry(err)
		}
		var setProps iceberg.Properties
		if ar.TableProperties != nil {
			p, err := ar.TableProperties(tbl)
			if err != nil {
				return 0, noRetry(err)
			}
			setProps = p
		}
		st, err := stage(ctx, tbl, icetable.MainBranch, KindOverwrite, nil, ar.Files, props, setProps, cache)
		if err != nil {
			return 0, noRetry(fmt.Errorf("append: %w", err))
		}
		md, loc, err := cat.CommitTable(ctx, ar.Ident, st.reqs, st.updates)
		if err != nil {
			return 0, &catalogError{err: err, discard: func() error { return removeWritten(context.WithoutCancel(ctx), tbl, st.written) }}
		}
		committed := icetable.New(ar.Ident, md, loc, DetachedFS(ctx, tbl), cat)
		removeOldMetadata(context.WithoutCancel(ctx), tbl, committed)
		if ar.Committed != nil {
			ar.Committed(committed)
		}
		return st.snap.SnapshotID, nil
	})
}
