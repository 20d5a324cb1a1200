package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// RowError is returned by [Sink.Write] for a batch holding a row the table
// cannot hold: a value beyond its column's type (a decimal with more
// digits than its precision, nanoseconds in a microsecond column), a null
// in a required field at any depth, or a source value no partition key
// can hold; under [WithLateRows]([table.RejectLate]), also a late row (Err
// wraps table.ErrLateRows). Row is the first such row of the batch. Nothing of the batch
// was kept: write the rows before Row again, hand the message at Row to
// [Sink.Reject] (the dead-letter table) and go on after it, as the Kafka
// adapter does. One bad message never stops a stream.
type RowError struct {
	Row int   // index in the batch
	Err error // why; wraps schema.ErrIncompatibleType, schema.ErrMissingRequired, partition.ErrBadValue or table.ErrLateRows
}

func (e *RowError) Error() string { return fmt.Sprintf("sink: row %d: %v", e.Row, e.Err) }

// Unwrap matches [ErrBadRow] and the cause.
func (e *RowError) Unwrap() []error { return []error{ErrBadRow, e.Err} }

// resolve applies res to rec and checks that every row has a partition
// key, as the table's own writes do. A batch with a row the table cannot
// hold fails with a *RowError naming the first one.
func (s *Sink) resolve(ctx context.Context, res *schema.Resolution, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	out, err := s.check(ctx, res, rec)
	if err == nil {
		return out, nil
	}
	if !isRowValueError(err) {
		return nil, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	// A batch of no rows failing the same way is not about a row.
	none := rec.NewSlice(0, 0)
	defer none.Release()
	if empty, eerr := s.check(ctx, res, none); eerr != nil {
		return nil, fmt.Errorf("sink: %s: %w", s.name, err)
	} else {
		empty.Release()
	}
	// Every check is of one row at a time, so a prefix fails exactly when
	// it holds a bad row: the shortest failing prefix ends at the first.
	lo, hi := 0, int(rec.NumRows()) // the first lo rows pass, the first hi fail
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		prefix := rec.NewSlice(0, int64(mid))
		o, perr := s.check(ctx, res, prefix)
		prefix.Release()
		if perr == nil {
			o.Release()
			lo = mid
			continue
		}
		hi, err = mid, perr
	}
	return nil, &RowError{Row: hi - 1, Err: err}
}

// check applies res to rec and, on a partitioned table, computes every
// row's key (which refuses values no key can hold).
func (s *Sink) check(ctx context.Context, res *schema.Resolution, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	out, err := res.Apply(ctx, rec)
	if err != nil {
		return nil, err
	}
	if s.spec != nil && !s.tbl.Spec().IsUnpartitioned() {
		if _, _, err := s.spec.RowKeys(out); err != nil {
			out.Release()
			return nil, err
		}
	}
	return out, nil
}

func isRowValueError(err error) bool {
	return errors.Is(err, schema.ErrIncompatibleType) || errors.Is(err, schema.ErrMissingRequired) || errors.Is(err, partition.ErrBadValue)
}
