package spillsort

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

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
func (so *Sorter) readRun(ctx context.Context, path string) (*runSource, error) {
	fsys, err := so.cfg.FS(ctx)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sort: read run: %w", err)
	}
	r, err := ipc.NewFileReader(f, ipc.WithSchema(so.cfg.Schema))
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
// BatchRows rows. A chunk takes a contiguous range of rows from each
// source batch it uses, so it is built from exactly its rows: the ranges
// are concatenated and the rows taken in merged order. Among equal rows
// the earliest source comes first.
func (so *Sorter) merge(ctx context.Context, srcs []*runSource, emit func(arrow.RecordBatch) error) error {
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
		rec, err := concatRecords(so.cfg.Schema, slicesIn)
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
		out, err := takeRows(ctx, rec, idx)
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
		if err := ctx.Err(); err != nil {
			return err
		}
		var min *runSource
		for _, s := range srcs {
			if s.cur != nil && (min == nil || so.cfg.Compare(s.cur, s.pos, min.cur, min.pos) < 0) {
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
		if len(picks) == so.cfg.BatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}
