package commit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy is the retry budget of the commit loop. The zero value means
// [DefaultPolicy].
//
// # Waits that favour the writer that has waited longest
//
// After its n-th conflict a writer waits a random time in a band that
// shrinks with n: [w/2, w), where w starts at min(MaxBackoff, 8 x
// MinBackoff) and halves with every conflict down to MinBackoff. With the
// defaults the bands are 80-160 ms, 40-80 ms, 20-40 ms, then always
// 10-20 ms ([PriorityBands] of them). The bands do not overlap, so of the
// writers that lost a race, one that has lost more races retries first,
// and its attempt (reload, plan, catalog call) is usually over before the
// next band opens; the jitter within a band separates writers of the same
// age.
//
// Why waits that shrink rather than the usual exponential growth: a writer
// that has just lost lost to a commit that has just landed, and that
// committer (typically a writer replacing another partition in a loop)
// needs a whole write of its own before it commits again, so soon is when
// the table is quiet. Growing waits put a starved writer at a random phase
// of the other writer's cycle on every attempt, so a writer whose attempt
// is slower than the other's cycle can lose every time (measured: 12 to 16
// attempts, and ErrConflict after 20). The waits stay short, so the attempt
// budget also bounds the time the call keeps trying.
//
// A first attempt made on a state the caller loaded before writing its
// files (as table's writers do) that conflicts is retried at once on a fresh
// load, without lowering the band: the state was old, no race was lost.
//
// Optimistic commits cannot promise progress against writers that commit
// in a loop; a commit lock ([Locker]: [PostgresLock], [FileLock]) does: writers that
// share it commit in the order they asked for it.
type Policy struct {
	// Attempts is the most commit attempts, the first included. Default 20.
	Attempts int
	// MinBackoff is the upper end of the shortest wait band, the one of a
	// writer that has lost [PriorityBands] or more races: it waits between
	// MinBackoff/2 and MinBackoff. Default 20 ms.
	MinBackoff time.Duration
	// MaxBackoff caps the first wait. Default 2 s (the first band, 8 x
	// MinBackoff, is below it with the defaults).
	MaxBackoff time.Duration
	// Timeout bounds the whole loop. Default 5 min.
	Timeout time.Duration
}

// DefaultPolicy is the budget used when none is given.
var DefaultPolicy = Policy{Attempts: 20, MinBackoff: 20 * time.Millisecond, MaxBackoff: 2 * time.Second, Timeout: 5 * time.Minute}

// ErrBadPolicy is returned for a policy with a negative field or
// MinBackoff > MaxBackoff.
var ErrBadPolicy = errors.New("commit: bad retry policy")

// WithDefaults returns p with its zero fields filled from [DefaultPolicy],
// or [ErrBadPolicy] when the rest is not usable.
func (p Policy) WithDefaults() (Policy, error) {
	if p.Attempts < 0 || p.MinBackoff < 0 || p.MaxBackoff < 0 || p.Timeout < 0 {
		return p, fmt.Errorf("%w: negative value in %+v", ErrBadPolicy, p)
	}
	if p.Attempts == 0 {
		p.Attempts = DefaultPolicy.Attempts
	}
	if p.MinBackoff == 0 {
		p.MinBackoff = DefaultPolicy.MinBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = DefaultPolicy.MaxBackoff
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultPolicy.Timeout
	}
	if p.MinBackoff > p.MaxBackoff {
		return p, fmt.Errorf("%w: MinBackoff %v > MaxBackoff %v", ErrBadPolicy, p.MinBackoff, p.MaxBackoff)
	}
	return p, nil
}

// Validate reports whether p is usable (zero fields take defaults).
func (p Policy) Validate() error {
	_, err := p.WithDefaults()
	return err
}

// PriorityBands is the number of wait bands of the backoff; see [Policy].
const PriorityBands = 4

// Backoff is the wait after n lost races (n >= 1) of a policy that
// [Policy.WithDefaults] returned: a random time in the n-th band (see
// [Policy]).
func (p Policy) Backoff(n int) time.Duration {
	w := min(p.MaxBackoff, p.MinBackoff<<(PriorityBands-1))
	w = max(p.MinBackoff, w>>min(n-1, 30))
	return w/2 + time.Duration(rand.Int64N(int64(w-w/2))) + 1
}
