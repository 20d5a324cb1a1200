package sink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icerun/icerun/schema"
)

// Write hands the sink rec, whose row i is the message at offsets[i] of
// source partition from. Offsets increase within a source partition; a row
// at or below the highest offset the table or the pending batch holds of
// from is dropped (a redelivery). The rows are resolved to the table
// schema by field id, name mapping, then name (unknown input fields are
// ignored), written to data files, and committed when the cadence asks for
// it (see [WithCommitRows]); the commit's error, if any, is returned, and
// the caller then resumes from [Sink.Start]. A batch holding a row the
// table cannot hold fails with a [*RowError] naming it, and nothing of the
// batch is kept.
//
// rec is neither retained nor released.
func (s *Sink) Write(ctx context.Context, from SourcePartition, offsets []int64, rec arrow.RecordBatch) error {
	if s.closed {
		return ErrClosed
	}
	defer s.notePending()
	if rec == nil || int64(len(offsets)) != rec.NumRows() {
		return fmt.Errorf("%w: %s: %d offsets for %d rows", ErrBadInput, from, len(offsets), numRows(rec))
	}
	if len(offsets) == 0 {
		return nil
	}
	res, err := s.resolution(rec.Schema())
	if err != nil {
		return err
	}
	resolved, err := s.resolve(ctx, res, rec)
	if err != nil {
		return err
	}
	defer resolved.Release()

	cl, err := s.classify(ctx, from, offsets, resolved)
	if err != nil {
		return err
	}
	if cl.last < 0 { // every row a redelivery
		return nil
	}
	if len(s.pending) == 0 {
		s.since = time.Now()
	}
	s.pending[from] = cl.mark
	if err := s.keepRows(ctx, resolved, cl.main); err != nil {
		return errors.Join(err, s.discard(ctx))
	}
	if len(cl.lateRows) > 0 {
		if err := s.routeLate(ctx, from, offsets, resolved, cl); err != nil {
			return errors.Join(err, s.discard(ctx))
		}
	}
	s.bytes += recordBytes(resolved) * int64(len(cl.main)) / resolved.NumRows()
	_, err = s.CommitIfDue(ctx)
	return err
}

func numRows(rec arrow.RecordBatch) int64 {
	if rec == nil {
		return 0
	}
	return rec.NumRows()
}

// resolution resolves an input schema against the table's, once per
// input schema.
func (s *Sink) resolution(in *arrow.Schema) (*schema.Resolution, error) {
	if s.res != nil && (in == s.resIn || in.Equal(s.resIn)) {
		return s.res, nil
	}
	nm := s.tbl.NameMapping()
	res, err := schema.Resolve(in, s.tbl.Schema(), nm, schema.IgnoreUnknown)
	if err != nil {
		return nil, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	s.res, s.resIn = res, in
	return res, nil
}

// keepRows writes the rows of rec at indices to the main table's files.
func (s *Sink) keepRows(ctx context.Context, rec arrow.RecordBatch, indices []int) error {
	if len(indices) == 0 {
		return nil
	}
	out, err := take(ctx, rec, indices)
	if err != nil {
		return err
	}
	return s.write(ctx, out)
}

// take returns the rows of rec at indices (rec itself, retained, when
// that is all of them).
func take(ctx context.Context, rec arrow.RecordBatch, indices []int) (arrow.RecordBatch, error) {
	if int64(len(indices)) == rec.NumRows() {
		rec.Retain()
		return rec, nil
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for _, i := range indices {
		b.Append(int64(i))
	}
	idx := b.NewInt64Array()
	defer idx.Release()
	st := array.RecordToStructArray(rec)
	defer st.Release()
	out, err := compute.TakeArray(ctx, st, idx)
	if err != nil {
		return nil, fmt.Errorf("sink: take rows: %w", err)
	}
	defer out.Release()
	return array.RecordFromStructArray(out.(*array.Struct), rec.Schema()), nil
}

// recordBytes is the size of rec's buffers (shared buffers counted once
// per use).
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	for _, c := range rec.Columns() {
		n += dataBytes(c.Data())
	}
	return n
}

func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	return n
}
