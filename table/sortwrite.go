package table

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
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// sorter puts the rows of one write in the table's sort order within the
// stager's memory bound: rows are collected into runs of at most runRows
// rows; a full run is sorted and spilled to an Arrow IPC file under the
// table's data folder (never committed, removed when the write ends; IPC
// because a run is read once, by the merge, and Parquet's encoding would
// cost as much as the write itself); at the end the spilled runs and the
// last run are merged, and the merged rows go to the stager's encoders. Every file an encoder writes then holds a
// subsequence of one sorted sequence, so it is sorted; rolling files at the
// target size and parallel encoders keep that true.
type sorter struct {
	ctx     context.Context
	tbl     *icetable.Table
	sc      *arrow.Schema
	order   *sortOrder
	runRows int64

	buf  []arrow.RecordBatch
	rows int64
	runs []string // paths of the spilled runs, in order of spilling
}

func (so *sorter) add(rec arrow.RecordBatch) error {
	so.buf = append(so.buf, rec)
	so.rows += rec.NumRows()
	if so.rows >= so.runRows {
		return so.spill()
	}
	return nil
}

// sortRun sorts the buffered rows into one batch and empties the buffer.
func (so *sorter) sortRun() (arrow.RecordBatch, error) {
	defer func() {
		for _, b := range so.buf {
			b.Release()
		}
		so.buf, so.rows = nil, 0
	}()
	rec, err := concatRecords(so.sc, so.buf)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	idx := make([]int, rec.NumRows())
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return so.order.compare(rec, i, rec, j) })
	return takeRows(so.ctx, rec, idx)
}

// spill sorts the buffered rows and writes them to a run file.
func (so *sorter) spill() (err error) {
	run, err := so.sortRun()
	if err != nil {
		return err
	}
	defer run.Release()
	fsys, err := so.tbl.FS(so.ctx)
	if err != nil {
		return err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return fmt.Errorf("sort: table file IO %T cannot write", fsys)
	}
	path := strings.TrimSuffix(so.tbl.Location(), "/") + "/data/icerun-sort-run-" + uuid.NewString() + ".arrow"
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
	w, err := ipc.NewFileWriter(out, ipc.WithSchema(so.sc))
	if err != nil {
		return fmt.Errorf("sort: spill run: %w", err)
	}
	for b := range slicesOf(run, mergeBatchRows) {
		err := w.Write(b)
		b.Release()
		if err != nil {
			return fmt.Errorf("sort: spill run: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("sort: spill run: %w", err)
	}
	return so.ctx.Err()
}

// drain emits every row added, in order, in batches that emit owns.
func (so *sorter) drain(emit func(arrow.RecordBatch) error) error {
	last, err := so.sortRun()
	if err != nil {
		return err
	}
	defer last.Release()
	if len(so.runs) == 0 {
		for b := range slicesOf(last, mergeBatchRows) {
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
		s, err := so.readRun(path)
		if err != nil {
			return err
		}
		srcs = append(srcs, s)
	}
	srcs = append(srcs, memorySource(last))
	return so.merge(srcs, emit)
}

// release removes the spilled runs.
func (so *sorter) release() error {
	var errs []error
	if len(so.runs) > 0 {
		fsys, err := so.tbl.FS(context.WithoutCancel(so.ctx))
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

// runSource yields the rows of one sorted run, batch by batch.
type runSource struct {
	cur   arrow.RecordBatch // nil once exhausted
	pos   int
	next  func() (arrow.RecordBatch, error)
	close func()
	part  int // index of cur in the output chunk's parts, -1 when unused
}

// advance moves to the next row, loading the next batch when needed.
func (s *runSource) advance() error {
	s.pos++
	for s.cur != nil && s.pos >= int(s.cur.NumRows()) {
		s.cur, s.part = nil, -1 // the chunk's parts keep a reference
		rec, err := s.next()
		if err != nil || rec == nil {
			return err
		}
		s.cur, s.pos = rec, 0
	}
	return nil
}

func memorySource(rec arrow.RecordBatch) *runSource {
	s := &runSource{part: -1, next: func() (arrow.RecordBatch, error) { return nil, nil }, close: func() {}}
	if rec.NumRows() > 0 {
		rec.Retain()
		s.cur = rec
	}
	return s
}

// readRun is a source over the rows of the run file at path.
func (so *sorter) readRun(path string) (*runSource, error) {
	fsys, err := so.tbl.FS(so.ctx)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sort: read run: %w", err)
	}
	r, err := ipc.NewFileReader(f, ipc.WithSchema(so.sc))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sort: read run: %w", err)
	}
	i := 0
	s := &runSource{part: -1, close: func() { r.Close(); f.Close() }}
	s.next = func() (arrow.RecordBatch, error) {
		for i < r.NumRecords() {
			rec, err := r.RecordBatchAt(i)
			i++
			if err != nil {
				return nil, fmt.Errorf("sort: read run: %w", err)
			}
			if rec.NumRows() > 0 {
				return rec, nil
			}
			rec.Release()
		}
		return nil, nil
	}
	s.cur, err = s.next()
	return s, err
}

// chunkPart is the contiguous rows [lo, hi) of one source batch that an
// output chunk takes.
type chunkPart struct {
	rec    arrow.RecordBatch
	lo, hi int
}

// merge emits the rows of srcs (each sorted) in order, in chunks of
// mergeBatchRows rows. A chunk takes a contiguous range of rows from each
// source batch it uses, so it is built from exactly its rows: the ranges
// are concatenated and the rows taken in merged order.
func (so *sorter) merge(srcs []*runSource, emit func(arrow.RecordBatch) error) error {
	var parts []chunkPart
	var picks [][2]int // part, row
	flush := func() error {
		if len(picks) == 0 {
			return nil
		}
		slicesIn := make([]arrow.RecordBatch, len(parts))
		offset := make([]int, len(parts))
		n := 0
		for i, p := range parts {
			slicesIn[i] = p.rec.NewSlice(int64(p.lo), int64(p.hi))
			offset[i] = n
			n += p.hi - p.lo
		}
		rec, err := concatRecords(so.sc, slicesIn)
		for _, s := range slicesIn {
			s.Release()
		}
		if err != nil {
			return err
		}
		idx := make([]int, len(picks))
		for i, pk := range picks {
			idx[i] = offset[pk[0]] + pk[1] - parts[pk[0]].lo
		}
		out, err := takeRows(so.ctx, rec, idx)
		rec.Release()
		if err != nil {
			return err
		}
		for _, p := range parts {
			p.rec.Release()
		}
		parts, picks = parts[:0], picks[:0]
		for _, s := range srcs {
			s.part = -1
		}
		return emit(out)
	}
	for {
		if err := so.ctx.Err(); err != nil {
			return err
		}
		var min *runSource
		for _, s := range srcs {
			if s.cur != nil && (min == nil || so.order.compare(s.cur, s.pos, min.cur, min.pos) < 0) {
				min = s
			}
		}
		if min == nil {
			return flush()
		}
		if min.part < 0 {
			min.cur.Retain()
			parts = append(parts, chunkPart{rec: min.cur, lo: min.pos, hi: min.pos})
			min.part = len(parts) - 1
		}
		parts[min.part].hi = min.pos + 1
		picks = append(picks, [2]int{min.part, min.pos})
		cur := min.cur
		if err := min.advance(); err != nil {
			return err
		}
		if min.cur != cur {
			cur.Release() // the source's own reference; the chunk keeps one
		}
		if len(picks) == mergeBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// concatRecords concatenates recs (of layout sc) into one batch.
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
