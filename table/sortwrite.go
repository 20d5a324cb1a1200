package table

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/schema"
)

// sorter puts the rows of one write in the table's sort order within the
// stager's memory bound: rows are collected into runs of at most runRows
// rows; a full run is sorted and spilled to staged Parquet files (like
// Upsert's input, never committed, removed when the write ends); at the
// end the spilled runs and the last run are merged, and the merged rows
// go to the stager's encoders. Every file an encoder writes then holds a
// subsequence of one sorted sequence, so it is sorted; rolling files at the
// target size and parallel encoders keep that true.
type sorter struct {
	ctx     context.Context
	tbl     *icetable.Table
	sc      *arrow.Schema
	cfg     config
	order   *sortOrder
	prepare func(*stager) error // makes a spill stager write like the main one
	runRows int64

	buf  []arrow.RecordBatch
	rows int64
	runs []*stager // spilled runs, in order of spilling
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

// spill sorts the buffered rows and writes them to a staged run.
func (so *sorter) spill() error {
	run, err := so.sortRun()
	if err != nil {
		return err
	}
	defer run.Release()
	cfg := so.cfg
	cfg.maxWriters, cfg.splitRows = 1, math.MaxInt64
	st := newStager(so.ctx, so.tbl, so.sc, cfg)
	so.runs = append(so.runs, st)
	if st.err != nil {
		return st.err
	}
	if err := so.prepare(st); err != nil {
		return err
	}
	for b := range slicesOf(run, mergeBatchRows) {
		if err := st.add(b); err != nil {
			return err
		}
	}
	_, err = st.finish()
	return err
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
	for _, st := range so.runs {
		files, err := st.finish()
		if err != nil {
			return err
		}
		// One source per file: a run's files each hold a sorted part of
		// it (one per partition on the dynamic path, and the pieces of
		// a run rolled at the target size), not one sequence.
		for _, f := range files {
			s, err := so.readFile(f)
			if err != nil {
				return err
			}
			srcs = append(srcs, s)
		}
	}
	srcs = append(srcs, memorySource(last))
	return so.merge(srcs, emit)
}

// release removes the spilled runs.
func (so *sorter) release() error {
	var errs []error
	for _, st := range so.runs {
		errs = append(errs, st.abort(errors.New("sorted run merged")))
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

// readFile is a source over the rows of f, a file of a spilled run.
func (so *sorter) readFile(f iceberg.DataFile) (*runSource, error) {
	s := &runSource{part: -1, next: func() (arrow.RecordBatch, error) { return nil, nil }, close: func() {}}
	tasks := []icetable.FileScanTask{{File: f, Length: f.FileSizeBytes()}}
	sc, batches, err := so.tbl.Scan(icetable.WithMaxConcurrency(1), icetable.WithArrowBatchSize(mergeBatchRows)).ReadTasks(so.ctx, tasks)
	if err != nil {
		return nil, err
	}
	res, err := schema.Resolve(sc, so.tbl.Schema(), so.tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return nil, err
	}
	pull, stop := iter.Pull2(batches)
	s.close = stop
	s.next = func() (arrow.RecordBatch, error) {
		for {
			raw, err, ok := pull()
			if !ok {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			rec, err := res.Apply(so.ctx, raw)
			raw.Release()
			if err != nil || rec.NumRows() > 0 {
				return rec, err
			}
			rec.Release()
		}
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
