package spillsort

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/google/uuid"
)

// Compare orders row i of a against row j of b, batches of the sorter's
// schema: negative when a's row comes first, zero when they are equal.
type Compare func(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int) int

// Config is what a [Sorter] sorts and where it spills.
type Config struct {
	// Schema is the layout of every batch added and emitted.
	Schema *arrow.Schema
	// Compare is the order the rows are emitted in.
	Compare Compare
	// RunRows is the number of rows collected before a run is spilled;
	// a run holds at least RunRows rows (the batch that fills it is
	// taken whole), the last one fewer.
	RunRows int64
	// BatchRows is the most rows of a batch emitted or written to a run
	// file.
	BatchRows int
	// Dir is the folder of the run files, a location FS can write to.
	Dir string
	// FS opens the file IO the run files are written, read and removed
	// with.
	FS func(context.Context) (iceio.IO, error)
}

// Sorter puts the rows added to it in order (see the package comment).
// The zero value is not usable: use [New]. Not safe for concurrent use.
type Sorter struct {
	cfg Config

	buf  []arrow.RecordBatch
	rows int64
	runs []string // paths of the spilled runs, in order of spilling
}

// New is a sorter of cfg; it writes nothing before the first spill.
func New(cfg Config) *Sorter {
	return &Sorter{cfg: cfg}
}

// Add takes rec, which the sorter owns from then on, and spills a run
// when RunRows rows are collected.
func (so *Sorter) Add(ctx context.Context, rec arrow.RecordBatch) error {
	so.buf = append(so.buf, rec)
	so.rows += rec.NumRows()
	if so.rows >= so.cfg.RunRows {
		return so.spill(ctx)
	}
	return nil
}

// sortRun sorts the buffered rows into one batch and empties the buffer.
func (so *Sorter) sortRun(ctx context.Context) (arrow.RecordBatch, error) {
	defer func() {
		for _, b := range so.buf {
			b.Release()
		}
		so.buf, so.rows = nil, 0
	}()
	rec, err := concatRecords(so.cfg.Schema, so.buf)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	idx := make([]int, rec.NumRows())
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return so.cfg.Compare(rec, i, rec, j) })
	return takeRows(ctx, rec, idx)
}

// spill sorts the buffered rows and writes them to a run file.
func (so *Sorter) spill(ctx context.Context) (err error) {
	run, err := so.sortRun(ctx)
	if err != nil {
		return err
	}
	defer run.Release()
	fsys, err := so.cfg.FS(ctx)
	if err != nil {
		return err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("sort: table file IO %T cannot write", fsys)
	}
	path := strings.TrimSuffix(so.cfg.Dir, "/") + "/icerun-sort-run-" + uuid.NewString() + ".arrow"
	so.runs = append(so.runs, path) // recorded first: a partial file is removed too
	out, err := wfs.Create(path)
	if err != nil {
		return fmt.Errorf("sort: spill run: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("sort: spill run: %w", cerr)
		}
	}()
	w, err := ipc.NewFileWriter(out, ipc.WithSchema(so.cfg.Schema))
	if err != nil {
		return fmt.Errorf("sort: spill run: %w", err)
	}
	for b := range slicesOf(run, so.cfg.BatchRows) {
		err := w.Write(b)
		b.Release()
		if err != nil {
			return fmt.Errorf("sort: spill run: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("sort: spill run: %w", err)
	}
	return ctx.Err()
}

// Drain emits every row added, in order, in batches that emit owns.
func (so *Sorter) Drain(ctx context.Context, emit func(arrow.RecordBatch) error) error {
	last, err := so.sortRun(ctx)
	if err != nil {
		return err
	}
	defer last.Release()
	if len(so.runs) == 0 {
		for b := range slicesOf(last, so.cfg.BatchRows) {
			if err := emit(b); err != nil {
				return err
			}
		}
		return nil
	}
	srcs := make([]*runSource, 0, len(so.runs)+1)
	defer func() {
		for _, s := range srcs {
			if s.cur != nil {
				s.cur.Release()
			}
			s.close()
		}
	}()
	for _, path := range so.runs {
		s, err := so.readRun(ctx, path)
		if err != nil {
			return err
		}
		srcs = append(srcs, s)
	}
	srcs = append(srcs, memorySource(last))
	return so.merge(ctx, srcs, emit)
}

// Release removes the spilled runs, even when ctx is canceled, and
// releases the rows not drained.
func (so *Sorter) Release(ctx context.Context) error {
	var errs []error
	if len(so.runs) > 0 {
		fsys, err := so.cfg.FS(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		for _, path := range so.runs {
			if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	so.runs = nil
	for _, b := range so.buf {
		b.Release()
	}
	so.buf = nil
	return errors.Join(errs...)
}

// concatRecords concatenates recs (of layout sc) into one batch, which the
// caller owns; no recs make a batch of no rows.
func concatRecords(sc *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, sc.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c := range cols {
		in := make([]arrow.Array, len(recs))
		for i, r := range recs {
			in[i] = r.Column(c)
		}
		if len(in) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, sc.Field(c).Type, 0)
			continue
		}
		a, err := array.Concatenate(in, memory.DefaultAllocator)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, fmt.Errorf("sort: %w", err)
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(sc, cols, rows)
	for _, a := range cols {
		a.Release()
	}
	return rec, nil
}

// takeRows is rec's rows idx, in that order.
func takeRows(ctx context.Context, rec arrow.RecordBatch, idx []int) (arrow.RecordBatch, error) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(len(idx))
	for _, i := range idx {
		b.UnsafeAppend(int64(i))
	}
	indices := b.NewArray()
	defer indices.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		a, err := compute.TakeArray(ctx, rec.Column(c), indices)
		if err != nil {
			for _, done := range cols[:c] {
				done.Release()
			}
			return nil, fmt.Errorf("sort: %w", err)
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(rec.Schema(), cols, int64(len(idx)))
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// slicesOf yields rec in slices of at most n rows, each owned by the
// receiver.
func slicesOf(rec arrow.RecordBatch, n int) iter.Seq[arrow.RecordBatch] {
	return func(yield func(arrow.RecordBatch) bool) {
		for lo := int64(0); lo < rec.NumRows(); lo += int64(n) {
			if !yield(rec.NewSlice(lo, min(lo+int64(n), rec.NumRows()))) {
				return
			}
		}
	}
}
