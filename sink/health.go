package sink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"
)

// ErrUnhealthy is matched by the error of [Health.Check]: the sink's
// commits are failing, hanging, or not being made.
var ErrUnhealthy = errors.New("sink: unhealthy")

// Health is what a sink reports of its commits and pending rows, for a
// readiness probe and for gauges ([Sink.Health]).
type Health struct {
	PendingRows  int64     // rows waiting for the next commit
	PendingBytes int64     // their bytes in memory
	Opened       time.Time // when the sink was opened
	// OldestPending is when the oldest pending row (or dead letter)
	// arrived; zero when nothing is pending.
	OldestPending time.Time
	// LastCommit is when the last commit that landed ended; zero when
	// none landed since Open.
	LastCommit time.Time
	// CommitStarted is when the commit in flight started; zero when none
	// is.
	CommitStarted time.Time
	// FailedCommits counts the commit attempts that failed since the last
	// one that landed (each a [Sink.Commit] that returned an error, after
	// its retries).
	FailedCommits int
	// LastError is the error of the last failed commit; nil once a commit
	// landed after it.
	LastError error
	// CommitInterval is the sink's [WithCommitInterval].
	CommitInterval time.Duration
	// Positions are the table's offset of each source partition it holds
	// (one it holds nothing of is not listed), as the sink last loaded or
	// committed them.
	Positions map[SourcePartition]int64
}

// UnhealthyFailures is the number of commits in a row that must fail
// for [Health.Check] to report a sink unhealthy.
const UnhealthyFailures = 3

// UnhealthyIntervals is how many commit intervals (at least
// [MinUnhealthyWait]) a commit may stay in flight, or the oldest pending
// row wait, before [Health.Check] reports a sink unhealthy: a commit is
// due after one interval, so three mean commits are not being made.
const UnhealthyIntervals = 3

// MinUnhealthyWait is the least wait of [UnhealthyIntervals].
const MinUnhealthyWait = 30 * time.Second

// Check reports, at now, whether the sink is committing: it returns an
// error wrapping [ErrUnhealthy] that says why when
//   - the last [UnhealthyFailures] commits failed (none landed since), or
//   - a commit has been in flight longer than the wait of
//     [UnhealthyIntervals] (a catalog that does not answer), or
//   - the oldest pending row has waited longer than that (commits are due
//     but not made).
//
// A sink that has nothing to commit is healthy.
func (h Health) Check(now time.Time) error {
	wait := UnhealthyIntervals * h.CommitInterval
	if wait < MinUnhealthyWait {
		wait = MinUnhealthyWait
	}
	switch {
	case h.FailedCommits >= UnhealthyFailures:
		return fmt.Errorf("%w: the last %d commits failed: %w", ErrUnhealthy, h.FailedCommits, h.LastError)
	case !h.CommitStarted.IsZero() && now.Sub(h.CommitStarted) > wait:
		return fmt.Errorf("%w: a commit in flight for %s (more than %s)", ErrUnhealthy, now.Sub(h.CommitStarted).Round(time.Second), wait)
	case !h.OldestPending.IsZero() && now.Sub(h.OldestPending) > wait:
		return fmt.Errorf("%w: rows pending for %s without a commit (more than %s)", ErrUnhealthy, now.Sub(h.OldestPending).Round(time.Second), wait)
	}
	return nil
}

// healthState is the sink's Health, written by the sink's goroutine and
// read by any (a probe, a gauge callback).
type healthState struct {
	mu sync.Mutex
	h  Health
}

// Health returns what the sink reports of its commits (see [Health]).
// Unlike the other methods, it is safe to call concurrently with them: a
// readiness probe or a metrics scrape reads it while the sink runs.
func (s *Sink) Health() Health {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	h := s.health.h
	h.Positions = maps.Clone(h.Positions)
	return h
}

// notePending records the pending rows and the table's positions in the
// sink's Health. Called by the sink's goroutine after each call that
// changes them.
func (s *Sink) notePending() {
	pos := make(map[SourcePartition]int64, len(s.committed))
	for sp, m := range s.committed {
		pos[sp] = m.Offset
	}
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	h := &s.health.h
	h.PendingRows, h.PendingBytes, h.Positions = s.rows, s.bytes, pos
	h.OldestPending = time.Time{}
	if len(s.pending) > 0 {
		h.OldestPending = s.since
	}
	h.CommitInterval = s.cfg.commitInterval
	if h.Opened.IsZero() {
		h.Opened = time.Now()
	}
}

// commitStarted records that a commit started at start.
func (s *Sink) commitStarted(start time.Time) {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	s.health.h.CommitStarted = start
}

// commitEnded records the end of the commit started at start (err nil:
// it landed) in the sink's Health and its latency histogram.
func (s *Sink) commitEnded(ctx context.Context, start time.Time, err error) {
	end := time.Now()
	s.meters.commitLatency(ctx, end.Sub(start), err)
	s.health.mu.Lock()
	h := &s.health.h
	h.CommitStarted = time.Time{}
	if err != nil {
		h.FailedCommits++
		h.LastError = err
	} else {
		h.FailedCommits, h.LastError, h.LastCommit = 0, nil, end
	}
	s.health.mu.Unlock()
	s.notePending()
}
