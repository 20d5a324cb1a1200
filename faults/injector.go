package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrInjected is the error of an injected fault.
var ErrInjected = errors.New("faults: injected fault")

// Kind is what happens at the chosen operation.
type Kind int

// The kinds of fault.
const (
	Fail          Kind = iota + 1 // not carried out; returns ErrInjected
	Hang                          // blocks until the context ends; returns its error
	ApplyThenFail                 // carried out, then returns ErrInjected
	Outage                        // this and every later operation fail with ErrInjected
)

// Kinds lists every kind, for tests that inject each.
var Kinds = []Kind{Fail, Hang, ApplyThenFail, Outage}

func (k Kind) String() string {
	switch k {
	case Fail:
		return "fail"
	case Hang:
		return "hang"
	case ApplyThenFail:
		return "apply-then-fail"
	case Outage:
		return "outage"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// DefaultHangLimit bounds a hang whose context never ends (an operation
// run under context.WithoutCancel).
const DefaultHangLimit = 5 * time.Second

// Injector numbers operations from 1 and injects its fault at operation k.
// Safe for concurrent use.
type Injector struct {
	kind      Kind
	at        int
	hangLimit time.Duration
	onHang    func()

	mu    sync.Mutex
	ops   []string
	fired string
}

// Option configures an [Injector].
type Option func(*Injector)

// HangLimit sets how long a [Hang] lasts when its context never ends.
// Default [DefaultHangLimit].
func HangLimit(d time.Duration) Option { return func(in *Injector) { in.hangLimit = d } }

// OnHang sets a function called when a [Hang] starts, e.g. the cancel
// function of the caller's context (a deadline that expires right now).
func OnHang(f func()) Option { return func(in *Injector) { in.onHang = f } }

// New returns an Injector that injects kind at operation k (1-based). With
// k 0 it never injects and only counts.
func New(kind Kind, k int, opts ...Option) *Injector {
	in := &Injector{kind: kind, at: k, hangLimit: DefaultHangLimit}
	for _, o := range opts {
		o(in)
	}
	return in
}

// Count is the number of operations seen so far.
func (in *Injector) Count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.ops)
}

// Ops returns the operations seen so far, in order, e.g.
// "io.create s3://b/t/data/x.parquet" or "catalog.commit db.t".
func (in *Injector) Ops() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.ops...)
}

// Fired returns the operation the fault was injected into, or "".
func (in *Injector) Fired() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired
}

// next records op and reports whether the fault applies to it.
func (in *Injector) next(op string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.ops = append(in.ops, op)
	n := len(in.ops)
	hit := in.at > 0 && (n == in.at || (in.kind == Outage && n > in.at))
	if hit && in.fired == "" {
		in.fired = op
	}
	return hit
}

// do runs fn as operation op, injecting the fault when it is op's turn.
func do(ctx context.Context, in *Injector, op string, fn func() error) error {
	_, err := call(ctx, in, op, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

// call is do for operations that return a value.
func call[T any](ctx context.Context, in *Injector, op string, fn func() (T, error)) (T, error) {
	var zero T
	if !in.next(op) {
		return fn()
	}
	injected := fmt.Errorf("%w: %s at %s", ErrInjected, in.kind, op)
	switch in.kind {
	case Hang:
		if in.onHang != nil {
			in.onHang()
		}
		t := time.NewTimer(in.hangLimit)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return zero, fmt.Errorf("%s: %w", op, context.Cause(ctx))
		case <-t.C:
			return zero, fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
		}
	case ApplyThenFail:
		v, err := fn()
		if c, ok := any(v).(io.Closer); ok && err == nil {
			_ = c.Close()
		}
		return zero, errors.Join(injected, err)
	default: // Fail, Outage
		return zero, injected
	}
}
