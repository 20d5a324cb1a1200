package snapshotcommit

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// Delta is the row-level change of one partition, merge-on-read (Java's
// RowDelta): new data files, and new delete files (position delete files
// on format v2, deletion vectors on v3) that delete rows of the
// partition's live data files. The partition's data files stay.
type Delta struct {
	Key     partition.Key
	Data    []iceberg.DataFile // new data files of Key
	Deletes []iceberg.DataFile // new delete files of Key
	// Superseded are live delete files of Key that a file of Deletes
	// replaces (it holds their positions too): deletion vectors, or
	// file-scoped position delete files; removed in the same snapshot,
	// so that a data file keeps one of them.
	Superseded []iceberg.DataFile
	// Base are the live files of Key (data and delete files, as [Files]
	// returns them) the delta was planned on: positions are only valid
	// in that state.
	Base []iceberg.DataFile
	// Fingerprint identifies the change (its input and kind); recorded
	// in the lineage, so that a rerun of the same change on the state it
	// left makes no snapshot. It must never equal the content
	// fingerprint of a replacement.
	Fingerprint string
	AddedRows   int64 // rows of Data
	DeletedRows int64 // rows Deletes delete that were live
}

// BaseMovedError says that partitions changed since their deltas were
// planned: the caller plans them again on the new state. Nothing was
// committed.
type BaseMovedError struct{ Keys []partition.Key }

func (e *BaseMovedError) Error() string {
	return fmt.Sprintf("partitions changed since their rows were located: %s", keyNames(e.Keys))
}

// RowDeltaRequest is one row-level change of one or more partitions of
// main, merge-on-read (Java's RowDelta).
type RowDeltaRequest struct {
	Target
	Deltas  []Delta
	Lineage Lineage
	// TableProperties, when set, returns table properties to set in the
	// same commit, as [Request].TableProperties.
	TableProperties func(md icetable.Metadata) (iceberg.Properties, error)
	// Verify, when set, is called on every attempt with its base, before
	// the partitions' files are compared with the deltas' Base: a non-nil
	// error stops the loop and is returned wrapped with Op, and nothing
	// is committed. A caller that compared rows of other partitions than
	// the deltas' checks with it that nothing it compared changed.
	Verify func(ctx context.Context, base *icetable.Table) error
}

// RowDelta commits rd.Deltas in one snapshot of main (operation
// "overwrite", or "delete" when it adds no rows, with Java's row-delta
// summary fields), through the commit loop.
//
// Every attempt plans the deltas' partitions again and fails with a
// *BaseMovedError when one no longer holds exactly its Base files (a
// concurrent upsert, delete or compaction). When every partition already
// holds what the same change from this code version left (the lineage
// records it with the partition's files), nothing is committed:
// Unchanged. Partitions with files of older specs, and tables with
// global equality deletes, are refused with [commit.ErrUnsupported].
//
// On error the caller owns the deltas' files, as with [Replace].
func RowDelta(ctx context.Context, cat catalog.Catalog, rd RowDeltaRequest) (commit.Result, error) {
	keys := make(map[partition.Key]bool, len(rd.Deltas))
	var res commit.Result
	for _, d := range rd.Deltas {
		keys[d.Key] = true
		res.Partitions = append(res.Partitions, d.Key.String())
	}
	slices.Sort(res.Partitions)
	op := &rowDeltaOp{rd: &rd, keys: keys, cache: newManifestCache()}
	l := &loop{cat: cat, t: &rd.Target, op: op}
	return l.run(ctx, res)
}

// rowDeltaOp is the [operation] of a [RowDeltaRequest].
type rowDeltaOp struct {
	rd    *RowDeltaRequest
	keys  map[partition.Key]bool
	cache *manifestCache // manifests read, kept across attempts
	plan  plan           // validate's plan of the attempt's base, which apply stages
}

// validate fails when a delta's partition no longer holds exactly the
// files the delta was planned on, or holds files the delta cannot apply
// to (older specs, global equality deletes).
func (o *rowDeltaOp) validate(ctx context.Context, tbl *icetable.Table) error {
	p, err := planFiles(ctx, tbl, o.rd.Spec, o.keys, o.cache)
	if err != nil {
		return err
	}
	o.plan = p
	if o.rd.Verify != nil {
		if err := o.rd.Verify(ctx, tbl); err != nil {
			return err
		}
	}
	switch {
	case len(p.old) > 0:
		return fmt.Errorf("%w: data file %s of the partitions was written under spec %d; replace the partition first", commit.ErrUnsupported, p.old[0].File.FilePath(), p.old[0].File.SpecID())
	case p.global:
		return fmt.Errorf("%w: the table has delete files of another spec that may apply to the partitions' rows", commit.ErrUnsupported)
	}
	var moved []partition.Key
	for _, d := range o.rd.Deltas {
		if !sameFiles(p.current[d.Key], d.Base) {
			moved = append(moved, d.Key)
		}
	}
	if len(moved) > 0 {
		return &BaseMovedError{Keys: moved}
	}
	return nil
}

// apply stages the deltas: nil when every partition holds what they
// would leave.
func (o *rowDeltaOp) apply(ctx context.Context, tbl *icetable.Table, res *commit.Result) (*change, error) {
	rd, p := o.rd, o.plan
	want := make(map[string]bool, len(rd.Deltas))
	for _, d := range rd.Deltas {
		want[d.Key.String()] = true
	}
	recorded := LastRecords(tbl, want)
	held := true
	var del, add []iceberg.DataFile
	var paths []string
	parts := make([]Part, len(rd.Deltas))
	fps, files := make([]string, len(rd.Deltas)), make([]string, len(rd.Deltas))
	res.AddedFiles, res.AddedRows, res.DeletedFiles, res.DeletedRows = 0, 0, 0, 0
	for i, d := range rd.Deltas {
		r, ok := recorded[d.Key.String()]
		held = held && ok && r.CodeVersion == rd.Lineage.CodeVersion && r.Fingerprint == d.Fingerprint && r.Files == filesHash(p.current[d.Key])
		del = append(del, d.Superseded...)
		add = append(append(add, d.Data...), d.Deletes...)
		parts[i] = Part{Key: d.Key, Files: d.Data, Fingerprint: d.Fingerprint, Rows: d.AddedRows}
		fps[i], files[i] = d.Fingerprint, filesHash(after(d))
		res.AddedFiles += len(d.Data)
		res.AddedRows += d.AddedRows
		res.DeletedRows += d.DeletedRows
		for _, f := range append(slices.Clip(d.Data), d.Deletes...) {
			paths = append(paths, f.FilePath())
		}
	}
	if held || len(add) == 0 {
		return nil, nil
	}
	var setProps iceberg.Properties
	if rd.TableProperties != nil {
		var err error
		if setProps, err = rd.TableProperties(tbl.Metadata()); err != nil {
			return nil, err
		}
	}
	sum, setProps, err := stamp(ctx, &rd.Target, tbl, summaryOf(rd.Lineage, rd.Token, rd.Spec, nil, parts, fps, files), setProps)
	if err != nil {
		return nil, err
	}
	st, err := stage(ctx, tbl, icetable.MainBranch, KindOverwrite, del, add, sum, setProps, o.cache)
	if err != nil {
		return nil, err
	}
	return st.change(paths), nil
}

// sameFiles reports whether a and b list the same file entries.
func sameFiles(a, b []iceberg.DataFile) bool {
	ids := func(fs []iceberg.DataFile) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = fileID(f)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(ids(a), ids(b))
}

// after are the live files of d's partition once d is committed: its
// Base without the superseded delete files, with the new files.
func after(d Delta) []iceberg.DataFile {
	gone := make(map[string]bool, len(d.Superseded))
	for _, f := range d.Superseded {
		gone[fileID(f)] = true
	}
	out := make([]iceberg.DataFile, 0, len(d.Base)+len(d.Data)+len(d.Deletes))
	for _, f := range d.Base {
		if !gone[fileID(f)] {
			out = append(out, f)
		}
	}
	return append(append(out, d.Data...), d.Deletes...)
}

// Held reports whether partition key of tbl holds what the change
// fingerprint from codeVersion left, untouched since: the newest record
// of key is that change's, and the partition's live files (data and
// delete files, as [Files] returns them) are files. A caller checks it
// before writing anything; [RowDelta] checks it again on every attempt.
func Held(tbl *icetable.Table, codeVersion string, key partition.Key, fingerprint string, files []iceberg.DataFile) bool {
	r, ok := LastRecords(tbl, map[string]bool{key.String(): true})[key.String()]
	return ok && r.CodeVersion == codeVersion && r.Fingerprint == fingerprint && r.Files == filesHash(files)
}
