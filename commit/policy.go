package commit

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy is the retry budget of the commit loop. The zero value means
// [DefaultPolicy].
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

// withDefaults fills zero fields from DefaultPolicy and validates the rest.
func (p Policy) withDefaults() (Policy, error) {
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
	_, err := p.withDefaults()
	return err
}

// PriorityBands is the number of wait bands of the backoff; see
// [Policy] backoff.
const PriorityBands = 4

// backoff is the wait before attempt n+1 after n conflicts (n >= 1).
//
// The wait shrinks as a writer loses more races, so that the writer that
// has waited longest retries first: after its n-th conflict a writer
// waits a random time in the band [w/2, w), where w starts at
// min(MaxBackoff, MinBackoff << (PriorityBands-1)) (160 ms with the
// defaults) and halves with every conflict down to MinBackoff (bands of
// 80-160, 40-80, 20-40 and then always 10-20 ms). The bands do not
// overlap: of writers that lost the same race, one that lost more races
// before always retries before one that lost fewer, and its attempt (the
// reload, the plan and the catalog call, a few ms to a few tens of ms) is
// over before the next band opens. The jitter within a band separates
// writers of the same age.
//
// Why shrinking and not the usual exponential growth: a writer that has
// just lost a race lost it to a commit that has just landed, and that
// committer (a writer replacing another partition in a loop, typically)
// needs a whole write of its own before it commits again, so retrying soon
// is when the table is quiet. Growing waits put a starved writer at a
// random phase of the hot writer's cycle at every attempt, which is how a
// slow attempt lost 20 times in a row. A writer never waits more than the
// first band, so the attempt budget bounds the call's time too.
func (p Policy) backoff(n int) time.Duration {
	w := min(p.MaxBackoff, p.MinBackoff<<(PriorityBands-1))
	w = max(p.MinBackoff, w>>min(n-1, 30))
	return w/2 + time.Duration(rand.Int64N(int64(w-w/2))) + 1
}
