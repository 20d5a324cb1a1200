package table

import "context"

// turn is a mutex whose waiters can give up when their context ends: the
// turn a writer's commits take one at a time ([Writer.LockCommits]).
// Waiters are served in the order they came (a channel's send queue).
type turn chan struct{}

func newTurn() turn { return make(turn, 1) }

func (t turn) lock() { t <- struct{}{} }

// lockCtx takes the turn, or returns ctx's cause once ctx ends first.
func (t turn) lockCtx(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (t turn) unlock() { <-t }
