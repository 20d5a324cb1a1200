package table

import (
	"errors"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"
)

// ErrBadBranch is returned for an empty branch name, or main where a
// branch other than main is needed.
var ErrBadBranch = errors.New("table: bad branch")

// WithBranch makes every write of the Writer ([Writer.ReplacePartition],
// [Writer.ReplacePartitions], [Writer.ReplaceWindow], [Writer.Upsert],
// [Writer.Recompute]) commit to branch name instead of main
// (write-audit-publish). The branch is cut from main's current snapshot
// by its first commit; an empty table gets an empty branch. Main, and
// every reader of main, sees nothing of it until [Writer.Publish].
// Lineage, Unchanged detection and backfill's resume read the branch's
// ancestry. Name must not be empty or main.
//
// [Writer.Table] and [Writer.Refresh] still return the table as the
// catalog holds it; [Writer.ReadBranch] reads the branch.
func WithBranch(name string) Option {
	return func(c *config) error {
		if err := checkBranch(name); err != nil {
			return fmt.Errorf("%w: %w", ErrBadOption, err)
		}
		c.branch = name
		return nil
	}
}

// WithForce lets [Writer.Publish] publish a branch even where main
// replaced one of the branch's partitions after the branch's base: the
// branch's content wins. Without it such a publish fails with
// commit.ErrPublishConflict.
func WithForce() Option {
	return func(c *config) error {
		c.force = true
		return nil
	}
}

// checkBranch fails for names that cannot be a write-audit-publish branch.
func checkBranch(name string) error {
	switch name {
	case "":
		return fmt.Errorf("%w: empty name", ErrBadBranch)
	case icetable.MainBranch:
		return fmt.Errorf("%w: %s is the table's published state, not a branch to write to or publish", ErrBadBranch, name)
	}
	return nil
}
