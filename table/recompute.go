package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// Source is what [Writer.Recompute] reads: the rows of one partition of
// an Iceberg table, at one snapshot.
type Source struct {
	// Table is the source table, as loaded from its catalog.
	Table *icetable.Table
	// Key is a partition of Table's current spec (parse it with
	// partition.ParseKey); its rows are read exactly, matched row by row
	// with the spec's transforms. The zero Key reads the whole table.
	Key partition.Key
	// SnapshotID pins the snapshot read, so that a rerun reads the same
	// rows. Zero reads Table's current snapshot.
	SnapshotID int64
}

// AggregateFunc computes the new content of an aggregate partition from
// every source row. It reads src to the end; the rows it returns go to
// [Writer.ReplacePartition], which releases them.
type AggregateFunc func(ctx context.Context, src array.RecordReader) (array.RecordReader, error)

// ErrNoSource is returned by [Writer.Recompute] for a Source without a
// table, or a snapshot the table does not have.
var ErrNoSource = errors.New("table: recompute: no such source")

// Recompute replaces partition key of the writer's table (an aggregate)
// with agg applied to every row of src: the aggregate is computed from the
// source on every run, never incremented from its previous value, so a
// rerun or a late source row gives the same total as a computation from
// scratch. It is [Writer.ReplacePartition] of the aggregated rows, with its
// guarantees (atomic, Unchanged when the aggregate gives the same rows in
// the same order: agg should return its rows in a deterministic order,
// for example sorted by group, or a rerun makes a new snapshot of the
// same rows).
//
// The source is streamed to agg batch by batch. A source table with no
// snapshot gives agg no rows.
func (w *Writer) Recompute(ctx context.Context, key partition.Key, src Source, agg AggregateFunc) (commit.Result, error) {
	op := fmt.Sprintf("table: recompute %s", partName(w.name, key))
	if src.Table == nil || agg == nil {
		return commit.Result{}, fmt.Errorf("%s: %w: nil source table or aggregate function", op, ErrNoSource)
	}
	rows, err := readSource(ctx, src)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: source %s: %w", op, strings.Join(src.Table.Identifier(), "."), err)
	}
	defer rows.Release()
	out, err := agg(ctx, rows)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: aggregate: %w", op, err)
	}
	defer out.Release()
	return w.ReplacePartition(ctx, key, out)
}

// readSource returns the rows of src as a reader.
func readSource(ctx context.Context, src Source) (array.RecordReader, error) {
	tbl := src.Table
	snap := src.SnapshotID
	if snap != 0 && tbl.Metadata().SnapshotByID(snap) == nil {
		return nil, fmt.Errorf("%w: snapshot %d", ErrNoSource, snap)
	}
	if snap == 0 && tbl.CurrentSnapshot() == nil {
		sc, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
		if err != nil {
			return nil, err
		}
		return array.NewRecordReader(sc, nil)
	}
	if snap == 0 {
		snap = tbl.CurrentSnapshot().SnapshotID
	}
	opts := []icetable.ScanOption{icetable.WithSnapshotID(snap)}
	var spec *partition.Spec
	if src.Key.IsValid() {
		var err error
		if spec, err = partition.NewSpec(tbl.Spec(), tbl.Schema()); err != nil {
			return nil, err
		}
		if src.Key.SpecID() != spec.ID() {
			return nil, fmt.Errorf("%w: key is for spec %d, the source's spec is %d", partition.ErrWrongSpec, src.Key.SpecID(), spec.ID())
		}
		opts = append(opts, icetable.WithRowFilter(spec.Filter(src.Key)))
	}
	sc, batches, err := tbl.Scan(opts...).ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	// Resolve to the table layout (with field IDs), as the partition
	// matcher and the aggregate expect it.
	res, err := schema.Resolve(sc, tbl.Schema(), tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return nil, err
	}
	var m *partition.Matcher
	if spec != nil {
		if m, err = spec.Matcher(src.Key, res.Schema()); err != nil {
			return nil, err
		}
	}
	exact := func(yield func(arrow.RecordBatch, error) bool) {
		for raw, err := range batches {
			if err != nil {
				yield(nil, err)
				return
			}
			rec, err := res.Apply(ctx, raw)
			raw.Release()
			if err == nil && m != nil {
				var out arrow.RecordBatch
				out, err = filterRows(ctx, rec, m)
				rec.Release()
				rec = out
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	}
	return array.ReaderFromIter(res.Schema(), exact), nil
}

// filterRows keeps the rows of rec that match says are in the key (the
// scan filter is for pruning and may select more).
func filterRows(ctx context.Context, rec arrow.RecordBatch, m *partition.Matcher) (arrow.RecordBatch, error) {
	mask, err := m.Mask(rec)
	if err != nil {
		return nil, err
	}
	b := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(mask, nil)
	arr := b.NewBooleanArray()
	defer arr.Release()
	return compute.FilterRecordBatch(ctx, rec, arr, compute.DefaultFilterOptions())
}
