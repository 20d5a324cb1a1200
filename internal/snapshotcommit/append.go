package snapshotcommit

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// AppendRequest adds data files to a table without removing any: a fast
// append, like Java's AppendFiles. The new files go to new manifests; the
// table's manifests are kept as they are (small ones are merged as
// [Replace]'s commits merge them), so the cost of an append follows what
// it adds, not the table.
type AppendRequest struct {
	Target
	Files []iceberg.DataFile
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
	var res commit.Result
	for _, f := range ar.Files {
		res.AddedRows += f.Count()
	}
	res.AddedFiles = len(ar.Files)
	l := &loop{cat: cat, t: &ar.Target, op: &appendOp{ar: &ar, cache: newManifestCache()}}
	return l.run(ctx, res)
}

// appendOp is the [operation] of an [AppendRequest].
type appendOp struct {
	ar    *AppendRequest
	cache *manifestCache // manifests read, kept across attempts
}

// validate accepts every state: an append reads no file it could lose
// (what the caller's Summary checks, it checks in apply).
func (o *appendOp) validate(context.Context, *icetable.Table) error { return nil }

// apply stages the new manifests of ar.Files on tbl.
func (o *appendOp) apply(ctx context.Context, tbl *icetable.Table, _ *commit.Result) (*change, error) {
	ar := o.ar
	props, err := callerSummary(tbl, ar.Summary, ar.Token)
	if err != nil {
		return nil, err
	}
	var setProps iceberg.Properties
	if ar.TableProperties != nil {
		if setProps, err = ar.TableProperties(tbl); err != nil {
			return nil, err
		}
	}
	st, err := stage(ctx, tbl, icetable.MainBranch, KindOverwrite, nil, ar.Files, props, setProps, o.cache)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	paths := make([]string, len(ar.Files))
	for i, f := range ar.Files {
		paths[i] = f.FilePath()
	}
	return st.change(paths), nil
}
