package sink

import (
	"context"
	"time"
)

// Pass moves the position of from over the message at offset, which its
// format makes no row: a change stream's tombstone (a Kafka record with
// a null value that log compaction needs, and that names no change).
// Unlike [Sink.Skip] it is the stream's own, not an operator's choice:
// it is counted in [Stats].Passed, neither logged nor named in the
// commit. The position covers it with the next commit, so a stream that
// ends with tombstones is not redelivered from before them. A message at
// or below the position already held is a redelivery: nothing happens.
// Offsets increase within a source partition across Write, Reject, Skip
// and Pass.
func (s *Sink) Pass(ctx context.Context, from SourcePartition, offset int64) error {
	if s.closed {
		return ErrClosed
	}
	mark := s.committed.get(from)
	if p, ok := s.pending[from]; ok {
		mark = p
	}
	if offset <= mark.Offset {
		s.stats.Redelivered++
		return nil
	}
	if len(s.pending) == 0 {
		s.since = time.Now()
	}
	mark.Offset = offset
	s.pending[from] = mark
	s.stats.Passed++
	if s.due() {
		_, err := s.Commit(ctx)
		return err
	}
	return nil
}
