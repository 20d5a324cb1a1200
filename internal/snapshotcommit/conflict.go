package snapshotcommit

import (
	"errors"
	"strings"
)

// IsConflict reports whether err says the catalog refused the commit
// because the table moved, so that nothing was applied. Other committers
// (backfill's maintenance commits) classify their errors with it too.
//
// iceberg-go wraps optimistic-concurrency failures of the SQL and REST
// catalogs in table.ErrCommitFailed, but the requirement checks it runs
// before writing (AssertRefSnapshotID, AssertCreate, ...) return plain
// errors whose text starts with "requirement failed". Those are checked
// before anything is written, so they are conflicts too.
func IsConflict(err error) bool {
	// iceberg-go spells its requirement errors "requirement failed" and
	// "Requirement failed"; either means the catalog checked and refused.
	return errors.Is(err, errCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed")
}
