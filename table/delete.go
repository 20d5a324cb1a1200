package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/substrait"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/rowdelete"
	"github.com/icerun/icerun/internal/writeprops"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/schema"
)

// ErrBadFilter is returned by [Writer.DeleteWhere] for a filter that does
// not bind to the table's schema. Nothing is committed.
var ErrBadFilter = errors.New("table: bad delete filter")

// Delete deletes the live rows of partition part whose key (keyColumns,
// top-level table columns) is the key of a row of keys (which needs only
// the key columns; others are ignored), merge-on-read: with position
// delete files on format v2 and deletion vectors on v3 (an existing
// vector of a data file merged into the new one), in one snapshot
// (operation delete). Only the partition's key columns are read. A
// delete that matches no live row makes no snapshot, so a rerun is
// harmless. The result counts the rows deleted (DeletedRows).
//
// A partition another writer changed meanwhile is located again on the
// new state, within the [WithRetry] budget, then [commit.ErrConflict].
// Format v1 tables, partitions with equality deletes and partitions with
// files of an older spec are refused with [commit.ErrUnsupported].
// [Writer.Compact] folds the deletes back into the data files.
func (w *Writer) Delete(ctx context.Context, part partition.Key, keys array.RecordReader, keyColumns ...string) (commit.Result, error) {
	op := fmt.Sprintf("table: delete from %s by (%s)", partName(w.name, part), strings.Join(keyColumns, ", "))
	return w.observed(ctx, opDelete, op, func(ctx context.Context) (commit.Result, error) {
		return w.deleteKeys(ctx, op, part, keys, keyColumns...)
	})
}

func (w *Writer) deleteKeys(ctx context.Context, op string, part partition.Key, keys array.RecordReader, keyColumns ...string) (commit.Result, error) {
	if keys == nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, ErrNilInput)
	}
	tbl, spec, err := w.deleteTarget(ctx, op, part)
	if err != nil {
		return commit.Result{}, err
	}
	if len(keyColumns) == 0 {
		return commit.Result{}, fmt.Errorf("%s: %w: no key columns", op, ErrBadUpsertKey)
	}
	set, rng, err := readKeys(ctx, tbl, keys, keyColumns)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	hashes := make(map[string]fingerprint.Hash, len(set))
	for k := range set {
		hashes[k] = fingerprint.Hash{}
	}
	fp := changeFingerprint("mor-delete", keyColumns, hashes)
	plan := func(ctx context.Context, tbl *icetable.Table, k partition.Key) (*rowDelta, error) {
		if len(set) == 0 {
			return nil, nil
		}
		m, err := newKeyMatcher(tbl, keyColumns, set, rng)
		if err != nil {
			return nil, err
		}
		return planDelete(ctx, w, tbl, spec, k, m, fp)
	}
	return w.commitDelete(ctx, op, tbl, spec, part, plan)
}

// DeleteWhere deletes the live rows of partition part that match filter
// (an expression on the table's columns, e.g. iceberg.LessThan(
// iceberg.Reference("amount"), int64(0))), merge-on-read, as [Writer.Delete]
// does; it reads every column of the partition's rows. A filter that
// does not bind to the schema fails with [ErrBadFilter].
func (w *Writer) DeleteWhere(ctx context.Context, part partition.Key, filter iceberg.BooleanExpression) (commit.Result, error) {
	op := fmt.Sprintf("table: delete from %s where %v", partName(w.name, part), filter)
	return w.observed(ctx, opDelete, op, func(ctx context.Context) (commit.Result, error) {
		return w.deleteWhere(ctx, op, part, filter)
	})
}

func (w *Writer) deleteWhere(ctx context.Context, op string, part partition.Key, filter iceberg.BooleanExpression) (commit.Result, error) {
	if filter == nil {
		return commit.Result{}, fmt.Errorf("%s: %w: nil filter", op, ErrBadFilter)
	}
	tbl, spec, err := w.deleteTarget(ctx, op, part)
	if err != nil {
		return commit.Result{}, err
	}
	if err := lineageNameClash(tbl.Schema()); err != nil { // the filter's scan would read it as the lineage column
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	bound, err := iceberg.BindExpr(tbl.Schema(), filter, true)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w: %w", op, ErrBadFilter, err)
	}
	if bound.Equals(iceberg.AlwaysFalse{}) {
		return commit.Result{Unchanged: true, Attempts: 1, SnapshotID: snapshotID(tbl)}, nil
	}
	fp := "mor-delete-where:" + fingerprintText(bound.String())
	plan := func(ctx context.Context, tbl *icetable.Table, k partition.Key) (*rowDelta, error) {
		m, err := newFilterMatcher(tbl, bound)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadFilter, err)
		}
		return planDelete(ctx, w, tbl, spec, k, m, fp)
	}
	return w.commitDelete(ctx, op, tbl, spec, part, plan)
}

// deleteTarget loads the table for a delete of partition part and checks
// that it can take one.
func (w *Writer) deleteTarget(ctx context.Context, op string, part partition.Key) (*icetable.Table, *partition.Spec, error) {
	if w.cfg.branch != "" {
		return nil, nil, fmt.Errorf("%s: %w: deletes are written to main only", op, commit.ErrUnsupported)
	}
	tbl, spec, err := w.begin(ctx, op)
	if err != nil {
		return nil, nil, err
	}
	if tbl.Metadata().Version() < 2 {
		return nil, nil, fmt.Errorf("%s: %w: format version 1 has no delete files", op, commit.ErrUnsupported)
	}
	if err := writeprops.Check(tbl.Properties()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if !part.IsValid() || part.SpecID() != spec.ID() {
		return nil, nil, fmt.Errorf("%s: %w: key %s is not a key of the table's current partition spec", op, partition.ErrWrongSpec, keyName(part))
	}
	return tbl, spec, nil
}

// commitDelete commits the delete plan makes of partition part.
func (w *Writer) commitDelete(ctx context.Context, op string, tbl *icetable.Table, spec *partition.Spec, part partition.Key, plan deltaPlanner) (commit.Result, error) {
	res, err := commitDeltas(ctx, w, op, tbl, spec, []partition.Key{part}, plan, nil)
	if errors.Is(err, rowdelete.ErrEqualityDeletes) {
		return res, fmt.Errorf("%w: %w", commit.ErrUnsupported, err)
	}
	return res, err
}

// planDelete plans the delete files of the rows m picks in partition k.
func planDelete(ctx context.Context, w *Writer, tbl *icetable.Table, spec *partition.Spec, k partition.Key, m rowdelete.Matcher, fp string) (*rowDelta, error) {
	base, tasks, held, err := w.deltaBase(ctx, tbl, spec, k, fp)
	if held || err != nil {
		return nil, err
	}
	return locateWith(ctx, tbl, spec, k, base, tasks, m, fp, false)
}

// readKeys reads the encoded keys of the rows of keys, and their first
// column's values.
func readKeys(ctx context.Context, tbl *icetable.Table, keys array.RecordReader, keyColumns []string) (map[string]struct{}, *keyRange, error) {
	ks, err := tbl.Schema().Select(true, keyColumns...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	for _, c := range keyColumns {
		if strings.Contains(c, ".") {
			return nil, nil, fmt.Errorf("%w: %q is not a top-level column of the table", ErrBadUpsertKey, c)
		}
	}
	res, err := schema.Resolve(keys.Schema(), ks, tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return nil, nil, err
	}
	enc, err := recordid.NewEncoder(keyColumns...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	out := map[string]struct{}{}
	rng := newKeyRange(keyColumns)
	var buf []byte
	for keys.Next() {
		rec, err := res.Apply(ctx, keys.RecordBatch())
		if err != nil {
			return nil, nil, err
		}
		if err := enc.Bind(rec); err != nil {
			rec.Release()
			return nil, nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		for row := range int(rec.NumRows()) {
			buf = enc.Append(buf[:0], row)
			out[string(buf)] = struct{}{}
		}
		rng.add(rec)
		rec.Release()
	}
	if err := keys.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading keys: %w", err)
	}
	return out, rng, nil
}

// filterMatcher picks the rows that match a bound filter, evaluated with
// arrow's compute engine on the filter converted to Substrait (as
// iceberg-go's scan filters rows).
type filterMatcher struct {
	tbl    *icetable.Table
	bound  iceberg.BooleanExpression
	schema *iceberg.Schema
	ctx    func(context.Context) context.Context
	eval   func(ctx context.Context, rec arrow.RecordBatch) (compute.Datum, error)
}

func newFilterMatcher(tbl *icetable.Table, bound iceberg.BooleanExpression) (*filterMatcher, error) {
	sc := tbl.Schema()
	reg, e, err := substrait.ConvertExpr(sc, bound, true)
	if err != nil {
		return nil, err
	}
	return &filterMatcher{
		tbl:    tbl,
		bound:  bound,
		schema: sc,
		ctx: func(ctx context.Context) context.Context {
			return exprs.WithExtensionIDSet(ctx, exprs.NewExtensionSetDefault(*reg))
		},
		eval: func(ctx context.Context, rec arrow.RecordBatch) (compute.Datum, error) {
			return exprs.ExecuteScalarExpression(ctx, rec.Schema(), e, compute.NewDatumWithoutOwning(rec))
		},
	}, nil
}

func (m *filterMatcher) ReadSchema() *iceberg.Schema { return m.schema }

func (m *filterMatcher) MayHold(iceberg.DataFile) bool { return true }

func (m *filterMatcher) Match(ctx context.Context, rec arrow.RecordBatch, hit func(row int, key []byte)) error {
	d, err := m.eval(m.ctx(ctx), rec)
	if err != nil {
		return err
	}
	defer d.Release()
	var mask *array.Boolean
	switch v := d.(type) {
	case *compute.ArrayDatum:
		arr := v.MakeArray()
		defer arr.Release()
		b, ok := arr.(*array.Boolean)
		if !ok {
			return fmt.Errorf("filter gave %s, want booleans", arr.DataType())
		}
		mask = b
	case *compute.ScalarDatum:
		if s, ok := v.Value.(interface{ String() string }); ok && v.Value.IsValid() && s.String() == "true" {
			for row := range int(rec.NumRows()) {
				hit(row, nil)
			}
		}
		return nil
	default:
		return fmt.Errorf("filter gave %s, want booleans", d)
	}
	for row := range mask.Len() {
		if mask.IsValid(row) && mask.Value(row) {
			hit(row, nil)
		}
	}
	return nil
}

// fingerprintText is a short hash of s.
func fingerprintText(s string) string {
	return changeFingerprint("", nil, map[string]fingerprint.Hash{s: {}})[1:]
}

// fork returns a matcher of its own converted expression: nothing is
// shared between the goroutines that evaluate them.
func (m *filterMatcher) Fork() rowdelete.Matcher {
	f, err := newFilterMatcher(m.tbl, m.bound)
	if err != nil {
		return m // converted once already: cannot fail
	}
	return f
}
