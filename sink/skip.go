package sink

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// SummarySkipped is the snapshot summary property of a sink commit whose
// positions pass messages [Sink.Skip] skipped: SOURCE/PARTITION@OFFSET,
// comma-separated (kafka:orders/0@41), so the table's history says which
// messages it does not hold, and why.
const SummarySkipped = "icerun.sink.skipped"

// skip is one skipped message.
type skip struct {
	from   SourcePartition
	offset int64
}

func (k skip) String() string { return k.from.String() + "@" + strconv.FormatInt(k.offset, 10) }

func skipsText(ks []skip) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.String()
	}
	return strings.Join(out, ",")
}

// Skip passes the message at offset of from without a row or a dead
// letter: the operator chose to drop it (a poison message that stops
// the stream without a dead-letter table). The position moves over it
// with the next commit, which names it in [SummarySkipped]; it is counted
// in [Stats].Skipped and logged. A message at or below the position
// already held is a redelivery: nothing happens. Offsets increase within
// a source partition across Write, Reject and Skip.
func (s *Sink) Skip(ctx context.Context, from SourcePartition, offset int64) error {
	if s.closed {
		return ErrClosed
	}
	if !s.passOver(from, offset) {
		return nil
	}
	s.skipped = append(s.skipped, skip{from, offset})
	s.stats.Skipped++
	s.cfg.log.Warn("sink skipped message", slog.String("table", s.name), slog.String("source", from.String()),
		slog.Int64("offset", offset))
	_, err := s.CommitIfDue(ctx)
	return err
}

// passOver moves the pending position of from over offset, a message
// that makes no row, and reports whether it did: a message at or below
// the position already held is a redelivery (counted, nothing moves).
func (s *Sink) passOver(from SourcePartition, offset int64) bool {
	mark := s.committed.get(from)
	if p, ok := s.pending[from]; ok {
		mark = p
	}
	if offset <= mark.Offset {
		s.stats.Redelivered++
		return false
	}
	if len(s.pending) == 0 {
		s.since = time.Now()
	}
	mark.Offset = offset
	s.pending[from] = mark
	return true
}
