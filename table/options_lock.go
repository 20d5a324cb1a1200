package table

import (
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
