package backfill

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/icerun/icerun/partition"
)

// Option configures [Run]. Run validates every option and returns an
// error wrapping [ErrBadOption] for a bad value.
type Option func(*config) error

// ErrBadOption is returned by Run for an invalid option value.
var ErrBadOption = errors.New("backfill: bad option")

type config struct {
	workers     int
	perSnapshot int
	retries     int
	onFailure   FailurePolicy
	resume      ResumePolicy
	order       Order
	progress    func(Progress)
	clock       func() time.Time
	hygiene     Hygiene
	identity    InputIdentity // identity.go
	shard       shard
}

// Defaults of the options.
const (
	DefaultWorkers = 1
	DefaultRetries = 2
)

// DefaultHygiene keeps 4 previous metadata.json files. It expires no
// snapshot.
var DefaultHygiene = Hygiene{PreviousVersionsMax: 4}

func defaults() config {
	return config{workers: DefaultWorkers, perSnapshot: 1, retries: DefaultRetries, onFailure: Stop, resume: SkipDone, order: Forward, hygiene: DefaultHygiene}
}

// WithWorkers runs up to n groups of keys at once. Default [DefaultWorkers].
func WithWorkers(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: %d workers", ErrBadOption, n)
		}
		c.workers = n
		return nil
	}
}

// WithKeysPerSnapshot commits k keys per snapshot: the rows of k jobs are
// written together and replace their k partitions atomically (a key whose
// job returns no rows is emptied). Fewer, larger snapshots make a long
// backfill's metadata smaller and its commits linear; a failure then
// retries the whole group. Every job's rows are checked against its own
// key, in a group as alone: a row of another key fails the group with
// partition.ErrRowOutside. Default 1.
func WithKeysPerSnapshot(k int) Option {
	return func(c *config) error {
		if k < 1 {
			return fmt.Errorf("%w: %d keys per snapshot", ErrBadOption, k)
		}
		c.perSnapshot = k
		return nil
	}
}

// WithRetries retries a failed group up to n more times (the job is called
// again). A cancelled context is never retried, nor a deterministic error
// that another attempt cannot fix (bad input, a missing input file, a
// permission error: see classify.go). Default [DefaultRetries].
func WithRetries(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: %d retries", ErrBadOption, n)
		}
		c.retries = n
		return nil
	}
}

// FailurePolicy says what Run does when a group has failed every attempt.
type FailurePolicy int

const (
	// Stop cancels the groups in flight and starts no other. The default.
	Stop FailurePolicy = iota + 1
	// Continue runs the other keys; the failures are in [Report].Failed.
	Continue
)

// WithOnFailure sets the failure policy. Default [Stop].
func WithOnFailure(p FailurePolicy) Option {
	return func(c *config) error {
		if p != Stop && p != Continue {
			return fmt.Errorf("%w: failure policy %d", ErrBadOption, p)
		}
		c.onFailure = p
		return nil
	}
}

// ResumePolicy says which keys a run skips.
type ResumePolicy int

const (
	// SkipDone skips every key whose latest write on the table (read from
	// the snapshot summaries) was made by the writer's code version, so a
	// second run after an interruption does only what is left. The default.
	SkipDone ResumePolicy = iota + 1
	// RedoAll runs every key (each is still an idempotent replace: an
	// unchanged key makes no snapshot).
	RedoAll
)

// WithResume sets the resume policy. Default [SkipDone].
func WithResume(p ResumePolicy) Option {
	return func(c *config) error {
		if p != SkipDone && p != RedoAll {
			return fmt.Errorf("%w: resume policy %d", ErrBadOption, p)
		}
		c.resume = p
		return nil
	}
}

// Order is the order in which keys start. With several workers they may
// finish in another order; the table ends the same whatever the order.
type Order struct {
	kind int
	seed uint64
}

var (
	// Forward runs the keys in the order given. The default.
	Forward = Order{kind: 1}
	// Reverse runs them last first: a backfill that fills the most recent
	// partitions first.
	Reverse = Order{kind: 2}
)

// Shuffled runs the keys in a pseudo-random order drawn from seed.
func Shuffled(seed uint64) Order { return Order{kind: 3, seed: seed} }

func (o Order) apply(keys []partition.Key) []partition.Key {
	out := slices.Clone(keys)
	switch o.kind {
	case 2:
		slices.Reverse(out)
	case 3:
		r := rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15))
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// WithOrder sets the order. Default [Forward].
func WithOrder(o Order) Option {
	return func(c *config) error {
		if o.kind < 1 || o.kind > 3 {
			return fmt.Errorf("%w: zero order", ErrBadOption)
		}
		c.order = o
		return nil
	}
}

// WithProgress calls fn after every group, from one goroutine at a time.
// Default: no callback.
func WithProgress(fn func(Progress)) Option {
	return func(c *config) error {
		c.progress = fn
		return nil
	}
}

// WithClock gives the runner a clock for the rate and ETA of [Progress]
// (e.g. time.Now). The runner reads no other clock; without this option
// those figures are zero. Default: none.
func WithClock(now func() time.Time) Option {
	return func(c *config) error {
		c.clock = now
		return nil
	}
}

// WithHygiene sets the metadata maintenance of the run. Default
// [DefaultHygiene].
func WithHygiene(h Hygiene) Option {
	return func(c *config) error {
		if h.KeepSnapshots < 0 || h.PreviousVersionsMax < 0 || h.ExpireRetainLast < 0 || h.ExpireOlderThan < 0 {
			return fmt.Errorf("%w: negative value in %+v", ErrBadOption, h)
		}
		if h.ExpireOlderThan > 0 && h.ExpireRetainLast == 0 {
			return fmt.Errorf("%w: ExpireOlderThan needs ExpireRetainLast", ErrBadOption)
		}
		c.hygiene = h
		return nil
	}
}
