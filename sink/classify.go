package sink

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icerun/icerun/table"
)

// classified is what becomes of the rows of one Write.
type classified struct {
	main     []int    // rows to append to the table
	lateRows []int    // late rows
	reasons  []string // why, one per late row
	mark     Mark     // the source partition's mark after the rows
	last     int      // the last row not redelivered; -1 when none
}

// classify decides the fate of every row of rec (resolved to the table
// schema), in offset order, from the mark of from before it: a
// redelivery (at or below the mark), a late row, a duplicate key, or a row
// to append. A replay from a committed mark decides every row as the first
// delivery did: the decision depends only on the mark and the rows.
func (s *Sink) classify(ctx context.Context, from SourcePartition, offsets []int64, rec arrow.RecordBatch) (classified, error) {
	mark := s.committed.get(from)
	if p, ok := s.pending[from]; ok {
		mark = p
	}
	cl := classified{last: -1}
	var times eventTimes
	if s.clock != nil {
		var err error
		if times, err = s.clock.times(rec); err != nil {
			return cl, fmt.Errorf("sink: %s: %w", s.name, err)
		}
	}
	if s.clock != nil && s.cfg.late == table.RejectLate {
		if err := s.rejectLate(from, offsets, times, mark); err != nil {
			return cl, err
		}
	}
	var keys rowKeys
	if s.keys != nil {
		var err error
		if keys, err = s.keys.rows(ctx, s, rec); err != nil {
			return cl, err
		}
	}
	for i, off := range offsets {
		if off <= mark.Offset {
			s.stats.Redelivered++
			continue
		}
		mark.Offset, cl.last = off, i
		if s.clock != nil && times.valid(i) {
			t := times.at(i)
			mark.MaxEventTime = max(mark.MaxEventTime, t)
			if reason, late := s.clock.late(t, mark.MaxEventTime); late {
				s.stats.Late++
				cl.lateRows = append(cl.lateRows, i)
				cl.reasons = append(cl.reasons, reason)
				continue
			}
		}
		if s.keys != nil && !s.keys.admit(keys, i) {
			s.stats.Duplicates++
			continue
		}
		cl.main = append(cl.main, i)
	}
	cl.mark = mark
	return cl, nil
}

// rejectLate returns a *RowError for the first late row of a batch (its
// offsets, event times and source partition's mark before it), counted in
// Stats.Late and LateRejected, or nil when it has none. It changes
// nothing else: classify refuses the whole batch before deciding a row.
func (s *Sink) rejectLate(from SourcePartition, offsets []int64, times eventTimes, mark Mark) error {
	for i, off := range offsets {
		if off <= mark.Offset {
			continue
		}
		mark.Offset = off
		if !times.valid(i) {
			continue
		}
		t := times.at(i)
		mark.MaxEventTime = max(mark.MaxEventTime, t)
		if reason, late := s.clock.late(t, mark.MaxEventTime); late {
			s.stats.Late++
			s.stats.LateRejected++
			return &RowError{Row: i, Err: fmt.Errorf("%w: %s offset %d: %s", table.ErrLateRows, from, off, reason)}
		}
	}
	return nil
}
