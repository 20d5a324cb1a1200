package table

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// oldSpecs decides the fate of data files written under an older partition
// spec that may hold rows of the replaced keys. It reads such a file and
// matches every row against the keys with the current spec's transforms,
// so the decision is exact whatever the old spec was (bucket included):
//
//   - no row in the keys: the file stays;
//   - every row in the keys: the file is deleted;
//   - some rows: the file is deleted and its other rows are rewritten into
//     new files (under the current spec) in the same snapshot.
//
// The rewritten files belong to [snapshotcommit.Replace], which removes those the
// table does not reference when it returns.
type oldSpecs struct {
	spec *partition.Spec
	keys []snapshotcommit.Part
	cfg  config
}

func (o *oldSpecs) decide(ctx context.Context, tbl *icetable.Table, task icetable.FileScanTask) (snapshotcommit.Decision, error) {
	f := task.File
	in, out, err := o.count(ctx, tbl, task)
	switch {
	case err != nil:
		return snapshotcommit.Decision{}, err
	case in == 0:
		return snapshotcommit.Decision{}, nil
	case out == 0:
		return snapshotcommit.Decision{Delete: true}, nil
	}
	files, err := o.rewrite(ctx, tbl, task)
	if err != nil {
		return snapshotcommit.Decision{}, fmt.Errorf("rewriting %s without the replaced rows: %w", f.FilePath(), err)
	}
	return snapshotcommit.Decision{Delete: true, Replacement: files}, nil
}

// each calls fn with every batch of task's file (the rows its delete
// files leave, resolved to the table schema) and its mask: true for rows
// in one of the keys. With lineage each batch ends with the rows'
// _row_id and _last_updated_sequence_number (rowlineage.go).
func (o *oldSpecs) each(ctx context.Context, tbl *icetable.Table, task icetable.FileScanTask, lineage bool, fn func(rec arrow.RecordBatch, mask []bool) error) error {
	task.Start, task.Length = 0, task.File.FileSizeBytes() // the whole file
	var opts []icetable.ScanOption
	if lineage {
		opts = append(opts, icetable.WithRowLineage())
	}
	sc, batches, err := tbl.Scan(opts...).ReadTasks(ctx, []icetable.FileScanTask{task})
	if err != nil {
		return err
	}
	res, err := schema.Resolve(sc, tbl.Schema(), tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return err
	}
	matchers := make([]*partition.Matcher, len(o.keys))
	for i, p := range o.keys {
		if matchers[i], err = o.spec.Matcher(p.Key, res.Schema()); err != nil {
			return err
		}
	}
	return applyEach(ctx, res, lineage, batches, func(rec arrow.RecordBatch) error {
		mask := make([]bool, rec.NumRows())
		for _, m := range matchers {
			mk, err := m.Mask(rec)
			if err != nil {
				return err
			}
			for i, in := range mk {
				mask[i] = mask[i] || in
			}
		}
		return fn(rec, mask)
	})
}

func (o *oldSpecs) count(ctx context.Context, tbl *icetable.Table, task icetable.FileScanTask) (in, out int64, err error) {
	err = o.each(ctx, tbl, task, false, func(_ arrow.RecordBatch, mask []bool) error {
		for _, m := range mask {
			if m {
				in++
			} else {
				out++
			}
		}
		return nil
	})
	return in, out, err
}

// rewrite writes the rows of task's file outside the keys (and not
// deleted) to new files. On a table with row lineage the rows keep their
// _row_id and _last_updated_sequence_number, as in a compaction: they
// are moved, not changed.
func (o *oldSpecs) rewrite(ctx context.Context, tbl *icetable.Table, task icetable.FileScanTask) ([]iceberg.DataFile, error) {
	sc, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	lineage, err := hasLineage(tbl, []icetable.FileScanTask{task})
	if err != nil {
		return nil, err
	}
	st := newStager(ctx, tbl, sc, o.cfg)
	if lineage {
		st.preserveLineage()
	}
	err = o.each(ctx, tbl, task, lineage, func(rec arrow.RecordBatch, mask []bool) error {
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		defer b.Release()
		for _, in := range mask {
			b.Append(!in)
		}
		keep := b.NewArray()
		defer keep.Release()
		kept, err := compute.FilterRecordBatch(ctx, rec, keep, compute.DefaultFilterOptions())
		if err != nil {
			return err
		}
		return st.add(kept)
	})
	if err != nil {
		_ = st.abort(err)
		return nil, err
	}
	files, err := st.finish()
	if err != nil {
		_ = st.abort(err)
		return nil, err
	}
	return files, nil
}
