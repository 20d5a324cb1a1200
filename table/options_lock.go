package table

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/commit"
)

// WithCommitLock makes every commit attempt of the writer hold l's lock on
// the table while it loads, plans and commits (see [commit.Locker]), so
// that writers sharing the lock never conflict with each other: N writers
// make N commits in N turns. For PostgreSQL catalogs use
// [commit.PostgresLock] with a *sql.DB on the catalog's database. Default:
// no lock, optimistic commits only.
func WithCommitLock(l commit.Locker) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil commit lock", ErrBadOption)
		}
		c.lock = l
		return nil
	}
}

// LockCommits takes this writer's commit turn and its commit lock
// ([WithCommitLock]) on its table, and returns their release. Hold it
// around a commit made outside the writer's replacements (a maintenance
// transaction: table properties, snapshot expiry), loading the table after
// taking it, so that the commit waits its turn instead of racing this
// writer's own calls (from other goroutines: a writer's commits take turns)
// and, with a lock, the writers that share it. The writer's own write
// calls wait while it is held: do not make them from the goroutine that
// holds it. The error wraps [commit.ErrLock] and ctx's cause.
func (w *Writer) LockCommits(ctx context.Context) (unlock func(), err error) {
	if err := w.commitTurn.lockCtx(ctx); err != nil {
		return nil, fmt.Errorf("table: %s: %w: %w", w.name, commit.ErrLock, err)
	}
	if w.cfg.lock == nil {
		return w.commitTurn.unlock, nil
	}
	release, err := w.cfg.lock.Lock(ctx, w.ident)
	if err != nil {
		w.commitTurn.unlock()
		return nil, fmt.Errorf("table: %s: %w", w.name, err)
	}
	return func() {
		release()
		w.commitTurn.unlock()
	}, nil
}
