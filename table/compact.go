package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// ErrCompactMismatch means the files a compaction wrote do not hold the
// partition's rows (a write that lost or changed rows). Nothing was
// committed and the files were removed.
var ErrCompactMismatch = errors.New("table: compacted files do not hold the partition's rows")

// Compact rewrites partition key's live rows (its data files with their
// delete files applied) into new data files of the table's target size,
// written one after the other by one encoder (whatever [WithParallelWrite]
// says: a compaction's aim is few full files, and its peak memory stays
// low), sorted by the table's sort order when icerun sorts by it, in one
// snapshot that removes the old data and delete files (operation
// replace, as Java's RewriteFiles: incremental readers skip it). Before committing, the new files are read back and their
// rows checked against the rows read (count and an order-insensitive sum
// of row hashes): a mismatch fails with [ErrCompactMismatch].
//
// With a [CompactPolicy] of Scope [CompactFiles] only the selected data
// files of the partition (those with many deleted rows, and its small
// files) are read and rewritten, and the snapshot removes exactly them
// and the delete files that apply to them only; the partition's other
// files stay.
//
// A partition the writer's [CompactPolicy] does not select (no delete
// files and few small files: nothing to fold) is left as it is, with no
// snapshot (Unchanged); so is one already compacted by this code
// version. When another writer changes the partition while it is being
// rewritten (new deletes, an upsert, a replacement), the new files are
// removed and the partition is planned and rewritten again on the new
// state, within the writer's [WithRetry] budget, then
// [commit.ErrConflict]: a concurrent delete is never undone nor a new row
// dropped. Commits to other partitions meanwhile only cost a retry of the
// commit, not a rewrite.
func (w *Writer) Compact(ctx context.Context, key partition.Key) (commit.Result, error) {
	op := fmt.Sprintf("table: compact %s", partName(w.name, key))
	return w.observed(ctx, opCompact, op, func(ctx context.Context) (commit.Result, error) {
		return w.compact(ctx, op, key)
	})
}

// compactRowGroupRows caps the row groups of the files Compact writes when
// the table sets no write.parquet.row-group-limit (iceberg-go's default is
// 1,048,576 rows). Compacting a 10M-row partition after 20 merge-on-read
// upserts peaked at 164-170 MB of RSS with one encoder and row groups of
// this size, against 186-209 MB with one encoder and iceberg-go's default
// and 225-237 MB with two encoders (4-6% more CPU than the latter).
const compactRowGroupRows = 256 << 10

// errPartitionMoved says that the partition a compaction rewrote no
// longer holds the files it read: it is planned again.
var errPartitionMoved = errors.New("the partition changed while it was compacted")

func (w *Writer) compact(ctx context.Context, op string, key partition.Key) (commit.Result, error) {
	return w.replan(replan{
		op: op,
		round: func(budget, spent int) (commit.Result, error) {
			return w.compactOnce(ctx, op, key, budget, spent)
		},
		moved: func(err error) bool { return errors.Is(err, errPartitionMoved) },
	})
}

// compactOnce plans and rewrites partition key on the writer's current
// state and commits within the call's budget of attempts, spent of which
// earlier rounds used. It fails with
// errPartitionMoved (its files removed) when the partition changed in
// between.
func (w *Writer) compactOnce(ctx context.Context, op string, key partition.Key, budget, spent int) (commit.Result, error) {
	tbl, spec, err := w.begin(ctx, op)
	if err != nil {
		return commit.Result{}, err
	}
	if !key.IsValid() || key.SpecID() != spec.ID() {
		return commit.Result{}, fmt.Errorf("%s: %w: not a key of the table's current partition spec", op, partition.ErrWrongSpec)
	}
	tasks, err := partitionFiles(ctx, tbl, spec, key)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	pol := w.cfg.compactPolicy(tbl)
	if ok, _ := pol.needs(tasks); !ok {
		return commit.Result{Unchanged: true, Attempts: 1, SnapshotID: snapshotID(tbl), Partitions: []string{key.String()}}, nil
	}
	base, err := snapshotcommit.Files(ctx, tbl, spec, []partition.Key{key})
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	read := tasks // the data files rewritten: all, or those the policy selects
	if pol.Scope == CompactFiles {
		read, _ = pol.selectFiles(tasks)
	}
	part, st, err := w.rewrite(ctx, tbl, spec, key, read)
	if err != nil {
		if st != nil {
			err = errors.Join(err, st.abort(err))
		}
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	if pol.Scope == CompactFiles {
		// Exactly the files read go; the Verify below holds that the
		// partition is still as planned, so none of them gained a
		// delete meanwhile and the files that stay are what they were.
		part.Remove = rewritten(tasks, read)
	}
	basePaths := paths(base[key])
	req := w.request(op, tbl, spec, []snapshotcommit.Part{part})
	req.Kind = snapshotcommit.KindRewrite
	req.Base = tbl
	req.Policy.Attempts, req.Spent = budget, spent
	req.Verify = func(_ *icetable.Table, files map[partition.Key][]iceberg.DataFile) error {
		if !slices.Equal(paths(files[key]), basePaths) {
			return errPartitionMoved
		}
		return nil
	}
	w.commitTurn.lock()
	result, err := snapshotcommit.Replace(ctx, w.cat, req)
	w.commitTurn.unlock()
	var unknown *commit.UnknownOutcomeError
	switch {
	case errors.As(err, &unknown):
		return result, err // the files may be live: leave them to orphan cleanup
	case err != nil:
		rerr := st.remove(part.Files)
		if rerr != nil && errors.Is(err, errPartitionMoved) { // no second rewrite while files are left behind
			return result, fmt.Errorf("%s: %w: %v; removing its files: %w", op, commit.ErrConflict, err, rerr)
		}
		return result, errors.Join(err, rerr)
	case result.Unchanged:
		return result, st.remove(part.Files)
	}
	_, _ = w.refresh(context.WithoutCancel(ctx))
	return result, nil
}

// rewrite writes the live rows of tasks (partition key's data files) to
// new files, sorted when the table has a sort order icerun sorts by, and
// checks them. On error the stager (when not nil) still holds files.
func (w *Writer) rewrite(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, key partition.Key, tasks []icetable.FileScanTask) (snapshotcommit.Part, *stager, error) {
	var sum fingerprint.Sum
	var st *stager
	lineage, err := hasLineage(tbl, tasks)
	if err != nil {
		return snapshotcommit.Part{}, nil, err
	}
	before := contentCheck{lineage: lineage}
	// One encoder writes the partition's files one after the other, each
	// up to the target size (the goal of a compaction; two in parallel made
	// two half-size files), with row groups of compactRowGroupRows: the
	// partition is decoded while the encoder buffers its row group, so
	// both bound the peak memory.
	cfg := w.cfg
	cfg.maxWriters = 1
	cfg.rowGroupRows = compactRowGroupRows
	err = readRows(ctx, tbl, tasks, lineage, func(sc *arrow.Schema) error {
		st = newStager(ctx, tbl, sc, cfg)
		if lineage {
			st.preserveLineage()
		}
		if err := st.sorted(cfg); err != nil {
			return err
		}
		return st.writeOnly(spec, key)
	}, func(rec arrow.RecordBatch) error {
		before.add(rec)
		if lineage { // the content fingerprint is of the table's columns
			data := withoutLineage(rec)
			sum.Add(data)
			data.Release()
		} else {
			sum.Add(rec)
		}
		rec.Retain()
		return st.add(rec)
	})
	if err != nil {
		return snapshotcommit.Part{}, st, err
	}
	if st == nil { // no rows: an empty partition is written as no file
		st = newStager(ctx, tbl, arrow.NewSchema(nil, nil), cfg)
	}
	files, err := st.finish()
	if err != nil {
		return snapshotcommit.Part{}, st, err
	}
	after := contentCheck{lineage: lineage}
	check := make([]icetable.FileScanTask, len(files))
	for i, f := range files {
		check[i] = icetable.FileScanTask{File: f, Length: f.FileSizeBytes()}
	}
	if err := readRows(ctx, tbl, check, lineage, nil, func(rec arrow.RecordBatch) error { after.add(rec); return nil }); err != nil {
		return snapshotcommit.Part{}, st, fmt.Errorf("reading the compacted files back: %w", err)
	}
	if before.rows != after.rows || before.sum != after.sum {
		return snapshotcommit.Part{}, st, fmt.Errorf("%w: %d rows read, %d written (row hash sums %x, %x)", ErrCompactMismatch, before.rows, after.rows, before.sum, after.sum)
	}
	return snapshotcommit.Part{Key: key, Files: files, Fingerprint: "compact:" + sum.String(), Rows: sum.Rows()}, st, nil
}

// CompactAll compacts every partition of the table's current spec that
// the writer's [CompactPolicy] selects, one snapshot per partition, and
// returns the result of each partition compacted, by key. It stops at the
// first error.
func (w *Writer) CompactAll(ctx context.Context) (map[string]commit.Result, error) {
	op := fmt.Sprintf("table: compact %s", w.name)
	tbl, err := w.head(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out := map[string]commit.Result{}
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	byKey := map[partition.Key][]icetable.FileScanTask{}
	for _, t := range tasks {
		if t.File.SpecID() != int32(spec.ID()) {
			continue
		}
		k, err := spec.KeyFromValues(t.File.Partition())
		if err != nil {
			return nil, fmt.Errorf("%s: data file %s: %w", op, t.File.FilePath(), err)
		}
		byKey[k] = append(byKey[k], t)
	}
	pol := w.cfg.compactPolicy(tbl)
	keys := make([]partition.Key, 0, len(byKey))
	for k, ts := range byKey {
		if ok, _ := pol.needs(ts); ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b partition.Key) int { return strings.Compare(a.String(), b.String()) })
	for _, k := range keys {
		r, err := w.Compact(ctx, k)
		if err != nil {
			return out, err
		}
		if !r.Unchanged {
			out[k.String()] = r
		}
	}
	return out, nil
}
