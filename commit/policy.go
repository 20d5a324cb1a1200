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
	// MinBackoff is the wait after the first conflict; it doubles on each
	// conflict, up to MaxBackoff, with full jitter. Default 20 ms.
	MinBackoff time.Duration
	// MaxBackoff caps one wait. Default 2 s.
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

// backoff is the wait before attempt n+1 after n conflicts (n >= 1): full
// jitter over an exponentially growing window.
func (p Policy) backoff(n int) time.Duration {
	w := p.MinBackoff << min(n-1, 20)
	if w <= 0 || w > p.MaxBackoff {
		w = p.MaxBackoff
	}
	return time.Duration(rand.Int64N(int64(w)) + 1)
}
