package sink

import "context"

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
	if !s.passOver(from, offset) {
		return nil
	}
	s.stats.Passed++
	_, err := s.CommitIfDue(ctx)
	return err
}
