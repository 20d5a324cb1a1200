package table

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// partitionFiles returns the scan tasks of the current-spec data files of
// partition k in tbl's current snapshot.
func partitionFiles(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, k partition.Key) ([]icetable.FileScanTask, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan(icetable.WithRowFilter(spec.Filter(k))).PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	var out []icetable.FileScanTask
	for _, t := range tasks {
		if t.File.SpecID() != int32(spec.ID()) {
			continue // older-spec files: the commit refuses them (no OldSpec)
		}
		fk, err := spec.KeyFromValues(t.File.Partition())
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", t.File.FilePath(), err)
		}
		if fk == k {
			out = append(out, t)
		}
	}
	return out, nil
}

func paths(files []iceberg.DataFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.FilePath()
	}
	slices.Sort(out)
	return out
}

// mergeBatchRows is the Arrow batch size a partition is read with.
const mergeBatchRows = 16 * 1024

// readRows reads the live rows of tasks, resolved to tbl's schema, one
// batch at a time: start (when set) is called once with their schema
// before the first batch; fn does not own rec. With lineage each batch
// ends with the rows' _row_id and _last_updated_sequence_number
// (rowlineage.go), after the columns of that schema.
func readRows(ctx context.Context, tbl *icetable.Table, tasks []icetable.FileScanTask, lineage bool, start func(*arrow.Schema) error, fn func(rec arrow.RecordBatch) error) error {
	if len(tasks) == 0 {
		return nil
	}
	opts := []icetable.ScanOption{icetable.WithMaxConcurrency(1), icetable.WithArrowBatchSize(mergeBatchRows)}
	if lineage {
		opts = append(opts, icetable.WithRowLineage())
	}
	sc, batches, err := tbl.Scan(opts...).ReadTasks(ctx, tasks)
	if err != nil {
		return err
	}
	res, err := schema.Resolve(sc, tbl.Schema(), tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return err
	}
	if start != nil {
		if err := start(res.Schema()); err != nil {
			return err
		}
	}
	return applyEach(ctx, res, lineage, batches, fn)
}

// applyEach resolves each of the scanned batches to the table schema with
// res and hands it to fn, releasing every batch. With lineage the
// batches' row lineage columns are kept, last.
func applyEach(ctx context.Context, res *schema.Resolution, lineage bool, batches iter.Seq2[arrow.RecordBatch, error], fn func(arrow.RecordBatch) error) error {
	for raw, err := range batches {
		if err != nil {
			return err
		}
		rec, err := res.Apply(ctx, raw)
		if err == nil && lineage {
			rec, err = keepLineage(raw, rec)
		}
		raw.Release()
		if err != nil {
			return err
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// keepLineage is rec (raw resolved) with raw's lineage columns appended;
// it releases rec.
func keepLineage(raw, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer rec.Release()
	rowID, seq, err := lineageOf(raw)
	if err != nil {
		return nil, err
	}
	return appendLineage(rec, rowID, seq), nil
}

var errOtherSpec = errors.New("older-spec files")

// filesByKey lists the live current-spec data files of keys, and the keys
// whose rows delete files change. It fails with errOtherSpec when a file
// of another spec may hold rows of the keys.
func filesByKey(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys []partition.Key, opts ...icetable.ScanOption) (map[partition.Key][]iceberg.DataFile, map[partition.Key]bool, error) {
	set := make(map[partition.Key]bool, len(keys))
	var f iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	for _, k := range keys {
		set[k] = true
		f = iceberg.NewOr(f, spec.Filter(k))
	}
	tasks, err := tbl.Scan(append(opts, icetable.WithRowFilter(f))...).PlanFiles(ctx)
	if err != nil {
		return nil, nil, err
	}
	out, deleted := make(map[partition.Key][]iceberg.DataFile), make(map[partition.Key]bool)
	for _, t := range tasks {
		if t.File.SpecID() != int32(spec.ID()) {
			return nil, nil, errOtherSpec
		}
		k, err := spec.KeyFromValues(t.File.Partition())
		if err != nil {
			return nil, nil, err
		}
		if set[k] {
			out[k] = append(out[k], t.File)
			if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
				deleted[k] = true
			}
		}
	}
	return out, deleted, nil
}

func snapshotID(tbl *icetable.Table) int64 {
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}
