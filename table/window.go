package table

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	"github.com/icerun/icerun/schema"
)

// LatePolicy says what happens to late rows: the input rows of
// [Writer.ReplaceWindow] whose partition is outside the window, and the
// rows a sink (package sink, sink.WithLateRows) receives after the
// watermark closed their partition. The zero value is no policy: both
// refuse it (ReplaceWindow with [ErrBadWindow], sink.Open with
// sink.ErrBadOption); a sink given no policy routes late rows
// ([RouteLate]).
type LatePolicy int

const (
	// RejectLate fails on a late row: ReplaceWindow with [ErrLateRows],
	// nothing committed; a sink's Write with a *sink.RowError naming the
	// row and wrapping ErrLateRows, nothing of the batch kept.
	RejectLate LatePolicy = iota + 1
	// DropLate drops late rows; they are counted (in
	// [commit.Result].LateRows, in a sink's Stats).
	DropLate
	// RouteLate writes late rows to a side table, created on first use:
	// ReplaceWindow's is [LateTable], with the run id and the partition
	// each row belongs to; a sink's is [StreamLateTable], with the reason
	// and each row's source position.
	RouteLate
)

func (p LatePolicy) String() string {
	switch p {
	case RejectLate:
		return "reject"
	case DropLate:
		return "drop"
	case RouteLate:
		return "route"
	}
	return fmt.Sprintf("LatePolicy(%d)", int(p))
}

var (
	// ErrLateRows is returned by [Writer.ReplaceWindow] under [RejectLate]
	// for a row whose partition is outside the window.
	ErrLateRows = errors.New("table: row outside the window")
	// ErrBadWindow is returned for an empty window, a zero or repeated key,
	// or an unknown late policy.
	ErrBadWindow = errors.New("table: bad window")
)

// ReplaceWindow makes every partition of window hold exactly the rows of
// the input that belong to it, in one atomic snapshot: the lookback of a
// nightly run, which reprocesses the last N partitions by event time
// ([partition.Spec.Last] makes the window). Rows are routed to their
// partition with the spec's transforms.
//
// Every partition of the window is replaced, including those the input
// leaves empty: a partition of the window without input rows is emptied,
// because the window's input is by definition everything known about those
// partitions now. (Contrast [Writer.ReplacePartitions], which never touches
// a partition without input rows.) Pass only keys whose complete input you
// have.
//
// Rows whose partition is outside the window follow late:
// [RejectLate], [DropLate] or [RouteLate]. Routed rows go to the side table
// [LateTable] (created on first use), in its partition for this window
// (its last key), replaced on every run of the window, so that running the
// same window twice leaves no duplicate there. The late table is committed
// before the window; when the window's commit fails, running the call
// again converges both.
//
// A partition that already holds exactly its input from this code version,
// untouched since, is left as it is ([commit.PartitionResult].Unchanged);
// when every partition is, no snapshot is made. The result has one
// [commit.PartitionResult] per key and the late-row counts.
//
// Per-partition deleted counts come from the snapshot the commit replaced
// and count current-spec files only; [commit.Result].DeletedRows is exact.
func (w *Writer) ReplaceWindow(ctx context.Context, window []partition.Key, late LatePolicy, rows array.RecordReader) (commit.Result, error) {
	op := fmt.Sprintf("table: replace window %s of %s", windowText(window), w.name)
	return w.observed(ctx, opReplaceWindow, op, func(ctx context.Context) (commit.Result, error) {
		return w.replaceWindow(ctx, op, window, late, rows)
	})
}

// replaceWindow is ReplaceWindow, observed by it.
func (w *Writer) replaceWindow(ctx context.Context, op string, window []partition.Key, late LatePolicy, rows array.RecordReader) (commit.Result, error) {
	if rows == nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, ErrNilInput)
	}
	set, err := windowSet(window, late)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	tbl, spec, err := w.begin(ctx, op)
	if err != nil {
		return commit.Result{}, err
	}
	for _, k := range window {
		if k.SpecID() != spec.ID() {
			return commit.Result{}, fmt.Errorf("%s: %w: key %s is for spec %d, the table's spec is %d", op, partition.ErrWrongSpec, keyName(k), k.SpecID(), spec.ID())
		}
		if err := checkPathSafe(tbl, spec, k); err != nil {
			return commit.Result{}, fmt.Errorf("%s: %w", op, err)
		}
	}
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), tbl.NameMapping(), w.cfg.unknown)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	in := &windowInput{
		input:  input{spec: spec, res: res, sums: make(map[partition.Key]*fingerprint.Sum, len(window))},
		window: set,
		late:   late,
		counts: make(map[string]int64),
	}
	for _, k := range window {
		in.sums[k] = new(fingerprint.Sum)
	}
	if late == RouteLate {
		in.route = w.newLateRoute(tbl, res.Schema(), slices.MaxFunc(window, cmpKeys))
	}

	st := newStager(ctx, tbl, res.Schema(), w.cfg)
	if err := in.stream(ctx, rows, st); err != nil {
		in.route.abort(err)
		return commit.Result{}, w.fail(op, st, err)
	}
	files, err := st.finish()
	if err != nil {
		in.route.abort(err)
		return commit.Result{}, w.fail(op, st, err)
	}
	parts, err := in.parts(files)
	if err != nil {
		in.route.abort(err)
		return commit.Result{}, w.fail(op, st, err)
	}
	setInputs(rows, parts)
	lateTable, err := in.route.finish(ctx)
	if err != nil {
		return commit.Result{}, w.fail(op, st, fmt.Errorf("late rows: %w", err))
	}
	result, err := w.commitWindow(ctx, op, spec, parts, st)
	result.Ignored = res.Ignored()
	result.LateTable = lateTable
	for _, n := range in.counts {
		result.LateRows += n
	}
	if len(in.counts) > 0 {
		result.LateByPartition = in.counts
	}
	return result, err
}

// commitWindow commits the parts that changed, leaving the others as they
// are (decided on the state each commit attempt plans on, so a part that
// another writer changed meanwhile is written again), and fills the
// per-partition results.
func (w *Writer) commitWindow(ctx context.Context, op string, spec *partition.Spec, parts []snapshotcommit.Part, st *stager) (commit.Result, error) {
	tbl := w.Table()
	result, err := w.commitParts(ctx, op, snapshotcommit.KindOverwrite, tbl, spec, parts, st, true)
	if err != nil {
		return result, err
	}
	held := make(map[string]bool)
	for _, p := range result.PerPartition {
		held[p.Key] = p.Unchanged
	}
	same := make(map[partition.Key]bool)
	var keep []iceberg.DataFile // the files of the parts left as they were
	for _, p := range parts {
		if held[p.Key.String()] {
			same[p.Key] = true
			keep = append(keep, p.Files...)
		}
	}
	if !result.Unchanged { // else commitParts removed every new file
		if err := removeFiles(ctx, tbl, keep); err != nil {
			return result, fmt.Errorf("%s: committed, but removing the files of unchanged partitions failed: %w", op, err)
		}
		// The committed state, to read what the commit deleted: the
		// writer's own (set by the commit), loaded only if it is not.
		if tbl = w.Table(); tbl.Metadata().SnapshotByID(result.SnapshotID) == nil {
			if tbl, err = w.head(context.WithoutCancel(ctx)); err != nil {
				tbl = nil // committed; the per-partition deletions are then unknown
			}
		}
	}
	result.PerPartition = perPartition(ctx, tbl, spec, parts, same, result)
	return result, nil
}

// perPartition fills one result per part. Deletions are read from the
// parent of the snapshot the commit made.
func perPartition(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, parts []snapshotcommit.Part, same map[partition.Key]bool, res commit.Result) []commit.PartitionResult {
	deleted := map[partition.Key][2]int64{}
	if tbl != nil && !res.Unchanged {
		if s := tbl.Metadata().SnapshotByID(res.SnapshotID); s != nil && s.ParentSnapshotID != nil {
			var keys []partition.Key
			for _, p := range parts {
				if !same[p.Key] {
					keys = append(keys, p.Key)
				}
			}
			byKey, _, err := filesByKey(ctx, tbl, spec, keys, icetable.WithSnapshotID(*s.ParentSnapshotID))
			if err == nil {
				for k, fs := range byKey {
					var rows int64
					for _, f := range fs {
						rows += f.Count()
					}
					deleted[k] = [2]int64{int64(len(fs)), rows}
				}
			}
		}
	}
	out := make([]commit.PartitionResult, len(parts))
	for i, p := range parts {
		out[i] = commit.PartitionResult{Key: p.Key.String(), Unchanged: same[p.Key] || res.Unchanged}
		if !out[i].Unchanged {
			out[i].AddedFiles, out[i].AddedRows = len(p.Files), p.Rows
			out[i].DeletedFiles, out[i].DeletedRows = int(deleted[p.Key][0]), deleted[p.Key][1]
		}
	}
	return out
}

// windowInput streams rows into a stager, splitting off the rows outside
// the window.
type windowInput struct {
	input
	window map[partition.Key]bool
	late   LatePolicy
	route  *lateRoute // RouteLate only
	counts map[string]int64
}

func (in *windowInput) stream(ctx context.Context, rows array.RecordReader, st *stager) error {
	in.hash = startHasher()
	defer in.hash.wait()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := in.res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return err
		}
		inside, err := in.split(ctx, out)
		if err != nil {
			return err
		}
		if inside == nil {
			continue
		}
		if err := st.add(inside); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading input: %w", err)
	}
	return ctx.Err()
}

// split takes ownership of rec, fingerprints its rows of the window and
// returns them (nil when none); the other rows follow the late policy.
func (in *windowInput) split(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	keys, rowKey, err := in.spec.RowKeys(rec)
	if err != nil {
		rec.Release()
		return nil, err
	}
	inside := make([]bool, len(keys))
	all := true
	for i, k := range keys {
		inside[i] = in.window[k]
		all = all && inside[i]
	}
	if !all && in.late == RejectLate {
		rec.Release()
		for row, ki := range rowKey {
			if !inside[ki] {
				return nil, fmt.Errorf("%w: row %d is in partition %s", ErrLateRows, row, keys[ki])
			}
		}
	}
	sums := make([]*fingerprint.Sum, len(keys)) // nil outside the window
	for ki, k := range keys {
		if inside[ki] {
			sums[ki] = in.sums[k]
		}
	}
	in.hash.add(rec, sums, rowKey)
	for _, ki := range rowKey {
		if !inside[ki] {
			in.counts[keys[ki].String()]++
		}
	}
	if all {
		return rec, nil
	}
	defer rec.Release()
	mask := make([]bool, len(rowKey))
	for row, ki := range rowKey {
		mask[row] = inside[ki]
	}
	if in.route != nil {
		lateRec, err := filter(ctx, rec, mask, false)
		if err != nil {
			return nil, err
		}
		err = in.route.send(ctx, lateRec, keys, rowKey, inside)
		if err != nil {
			return nil, err
		}
	}
	return filter(ctx, rec, mask, true)
}

// filter returns the rows of rec whose mask is want, nil when there are
// none.
func filter(ctx context.Context, rec arrow.RecordBatch, mask []bool, want bool) (arrow.RecordBatch, error) {
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	n := 0
	for _, m := range mask {
		b.Append(m == want)
		if m == want {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	sel := b.NewArray()
	defer sel.Release()
	return compute.FilterRecordBatch(ctx, rec, sel, compute.DefaultFilterOptions())
}

func windowSet(window []partition.Key, late LatePolicy) (map[partition.Key]bool, error) {
	if late != RejectLate && late != DropLate && late != RouteLate {
		return nil, fmt.Errorf("%w: unknown late policy %d", ErrBadWindow, int(late))
	}
	if len(window) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrBadWindow)
	}
	set := make(map[partition.Key]bool, len(window))
	for _, k := range window {
		if !k.IsValid() {
			return nil, fmt.Errorf("%w: zero key", ErrBadWindow)
		}
		if set[k] {
			return nil, fmt.Errorf("%w: key %s twice", ErrBadWindow, k)
		}
		set[k] = true
	}
	return set, nil
}

func windowText(window []partition.Key) string {
	switch len(window) {
	case 0:
		return "[]"
	case 1:
		return window[0].String()
	}
	return fmt.Sprintf("%s..%s (%d keys)", slices.MinFunc(window, cmpKeys), slices.MaxFunc(window, cmpKeys), len(window))
}

func cmpKeys(a, b partition.Key) int { return strings.Compare(a.String(), b.String()) }
