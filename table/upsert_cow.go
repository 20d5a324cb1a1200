package table

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
)

// merged is the new content of one partition, written to staged files,
// and the files of the partition (data and delete files) it was computed
// from.
type merged struct {
	part snapshotcommit.Part
	base []string // sorted paths of the files merged from
	st   *stager
}

// mergeUpsert writes the new content of partition k: the rows it holds in
// tbl whose key is not in the change set, then the change set's rows of k.
// Memory: one batch at a time, plus the keys of k's input.
func (u *upsert) merge(ctx context.Context, tbl *icetable.Table, k partition.Key) (*merged, error) {
	if err := u.plan.check(tbl); err != nil {
		return nil, err
	}
	tasks, err := partitionFiles(ctx, tbl, u.spec, k)
	if err != nil {
		return nil, err
	}
	// The partition's files as the commit plans them (data files and the
	// delete files of the partition): its Verify compares them again.
	base, err := snapshotcommit.Files(ctx, tbl, u.spec, []partition.Key{k})
	if err != nil {
		return nil, err
	}
	lineage, err := hasLineage(tbl, tasks)
	if err != nil {
		return nil, err
	}
	cfg := u.cfg
	cfg.rowGroupRows = rewriteRowGroupRows
	m := &merged{st: newStager(ctx, tbl, u.res.Schema(), cfg), base: paths(base[k])}
	// With row lineage (rowlineage.go) the rows kept carry theirs, and an
	// updated row the _row_id of the row it replaces (ids), as Java's
	// copy-on-write MERGE does.
	var ids map[string]int64
	if lineage {
		m.st.preserveLineage()
		ids = map[string]int64{}
	}
	var sum fingerprint.Sum
	add := func(rec arrow.RecordBatch) error {
		if rec.NumRows() == 0 {
			rec.Release()
			return nil
		}
		if ids != nil { // the content fingerprint is of the table's columns
			data := withoutLineage(rec)
			sum.Add(data)
			data.Release()
		} else {
			sum.Add(rec)
		}
		return m.st.add(rec)
	}
	win, _, err := u.winners(ctx, tbl, k)
	if err != nil {
		return m, err
	}
	same := newSameContent(win)
	if len(tasks) > 0 {
		if err := u.keepUnchanged(ctx, tbl, tasks, win, same, ids, add); err != nil {
			return m, err
		}
	}
	addChanged := add
	if ids != nil {
		if addChanged, err = u.carryRowIDs(add, ids); err != nil {
			return m, err
		}
	}
	if err := u.addChanged(ctx, k, win, addChanged); err != nil {
		return m, err
	}
	files, err := m.st.finish()
	if err != nil {
		return m, err
	}
	fp := sum.String()
	if recorded, ok := recordedFingerprint(tbl, k); ok && same.same() {
		fp = recorded // the same rows, perhaps in another order
	}
	m.part = snapshotcommit.Part{Key: k, Files: files, Fingerprint: fp, Rows: sum.Rows()}
	return m, nil
}

// keepUnchanged streams the rows of tasks whose key the change set (win)
// does not hold to add, and the others to same. With ids (not nil) the
// rows passed to add end with their lineage columns, and ids gets the
// _row_id of each row dropped, by key.
func (u *upsert) keepUnchanged(ctx context.Context, tbl *icetable.Table, tasks []icetable.FileScanTask, win map[string]fingerprint.Hash, same *sameContent, ids map[string]int64, add func(arrow.RecordBatch) error) error {
	enc, err := recordid.NewEncoder(u.keyColumns...)
	if err != nil {
		return err
	}
	var buf []byte
	keep := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer keep.Release()
	checkSchema := func(sc *arrow.Schema) error {
		if !sc.Equal(u.res.Schema()) {
			return fmt.Errorf("internal error: the table's rows resolve to %s, the input to %s", sc, u.res.Schema())
		}
		return nil
	}
	// One file at a time, in batches of mergeBatchRows (readRows): memory
	// stays a few batches whatever the partition size.
	return readRows(ctx, tbl, tasks, ids != nil, checkSchema, func(out arrow.RecordBatch) error {
		rec := out // the table's columns: keys, and what same hashes; out is what is kept
		if ids != nil {
			rec = withoutLineage(out)
			defer rec.Release()
		}
		if err := enc.Bind(rec); err != nil {
			return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		var rowIDs *array.Int64
		if ids != nil {
			rowIDs, _ = out.Column(int(out.NumCols()) - 2).(*array.Int64)
		}
		n, dropped := int(rec.NumRows()), 0
		keep.Reserve(n)
		same.batch()
		for row := 0; row < n; row++ {
			buf = enc.Append(buf[:0], row)
			_, hit := win[string(buf)]
			keep.UnsafeAppend(!hit)
			if hit {
				dropped++
				same.drop(rec, row, string(buf))
				if _, seen := ids[string(buf)]; rowIDs != nil && !seen {
					ids[string(buf)] = rowIDs.Value(row)
				}
			}
		}
		mask := keep.NewBooleanArray()
		defer mask.Release()
		if dropped == 0 {
			out.Retain() // add owns what it is given; readRows releases out
			return add(out)
		}
		kept, err := compute.FilterRecordBatch(ctx, out, mask, compute.DefaultFilterOptions())
		if err != nil {
			return err
		}
		return add(kept)
	})
}

// rewriteRowGroupRows caps the row groups of a partition Upsert rewrites
// when the table sets no write.parquet.row-group-limit (iceberg-go's
// default is 1,048,576 rows). An upsert decodes the partition's current
// rows while its writers buffer the new row groups; with row groups this
// size its peak memory stays within a full replace's of the same
// partition (1M rows: about 130 MB against 136 to 153 MB), for about 6%
// more time. DuckDB writes row groups of about this size.
const rewriteRowGroupRows = 128 << 10

// baseMovedError says that partitions changed since they were merged.
type baseMovedError struct{ keys []partition.Key }

func (e *baseMovedError) Error() string {
	return fmt.Sprintf("partitions changed since they were read: %s", keyNames(e.keys))
}

// run merges every touched partition and commits, merging again the
// partitions another writer changed in between.
func (u *upsert) run(ctx context.Context, tbl *icetable.Table) (commit.Result, error) {
	keys := u.keys()
	if len(keys) == 0 {
		r := commit.Result{Unchanged: true}
		if s := tbl.CurrentSnapshot(); s != nil {
			r.SnapshotID = s.SnapshotID
		}
		return r, nil
	}
	parts := make(map[partition.Key]*merged, len(keys))
	removeAll := func() error {
		var errs []error
		for _, m := range parts {
			errs = append(errs, u.discard(m))
		}
		return errors.Join(errs...)
	}
	stale := keys
	result, err := u.w.replan(replan{
		op: u.op,
		round: func(budget, spent int) (commit.Result, error) {
			for _, k := range stale {
				if old := parts[k]; old != nil {
					if err := u.discard(old); err != nil {
						return commit.Result{}, fmt.Errorf("%s: %w", u.op, err)
					}
				}
				m, err := u.merge(ctx, tbl, k)
				if err != nil {
					if m != nil {
						err = errors.Join(err, u.discard(m))
					}
					return commit.Result{}, fmt.Errorf("%s: merge %s: %w", u.op, keyName(k), err)
				}
				parts[k] = m
			}
			req := u.request(ctx, tbl, keys, parts)
			req.Policy.Attempts, req.Spent = budget, spent
			u.w.commitTurn.lock()
			defer u.w.commitTurn.unlock()
			return snapshotcommit.Replace(ctx, u.w.cat, req)
		},
		moved: func(err error) bool {
			var moved *baseMovedError
			if errors.As(err, &moved) {
				stale = moved.keys
				return true
			}
			return false
		},
		again: func() (err error) {
			tbl, err = u.w.rebase(ctx, u.op, u.schemaID, u.spec.ID(), "merging")
			return err
		},
	})
	var unknown *commit.UnknownOutcomeError
	switch {
	case err == nil:
		return u.done(ctx, result, parts)
	case errors.As(err, &unknown):
		return result, err // the files may be live: leave them to orphan cleanup
	}
	return result, errors.Join(err, removeAll())
}

// request is the commit of the merged partitions, with a Verify that
// fails when the guard does or a partition no longer holds the files it
// was merged from.
func (u *upsert) request(ctx context.Context, tbl *icetable.Table, keys []partition.Key, parts map[partition.Key]*merged) snapshotcommit.Request {
	var ps []snapshotcommit.Part
	for _, k := range keys {
		ps = append(ps, parts[k].part)
	}
	req := u.w.request(u.op, tbl, u.spec, ps)
	req.Verify = func(base *icetable.Table, files map[partition.Key][]iceberg.DataFile) error {
		if err := u.guard.check(ctx, base); err != nil {
			return err
		}
		var moved []partition.Key
		for _, k := range keys {
			if !slices.Equal(paths(files[k]), parts[k].base) {
				moved = append(moved, k)
			}
		}
		if len(moved) > 0 {
			return &baseMovedError{keys: moved}
		}
		return nil
	}
	return req
}

// done finishes a committed upsert: unchanged partitions' staged files are
// removed, and the writer's table state refreshed.
func (u *upsert) done(ctx context.Context, result commit.Result, parts map[partition.Key]*merged) (commit.Result, error) {
	if result.Unchanged {
		var errs []error
		for _, m := range parts {
			errs = append(errs, u.discard(m))
		}
		if err := errors.Join(errs...); err != nil {
			return result, fmt.Errorf("%s: unchanged, but removing the new files failed: %w", u.op, err)
		}
	}
	_, _ = u.w.refresh(context.WithoutCancel(ctx)) // committed; the cached state is only a hint
	return result, nil
}

// discard removes the staged files of m.
func (u *upsert) discard(m *merged) error {
	files, _ := m.st.finish()
	return m.st.remove(files)
}
