package commit

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoSuchBranch is returned when a branch that must exist (to publish,
// drop or read it) is not in the table.
var ErrNoSuchBranch = errors.New("commit: no such branch")

// ErrPublishConflict means main replaced a partition after the branch's
// base that the branch replaced too; nothing was published. The
// *PublishConflictError names the partitions.
var ErrPublishConflict = errors.New("commit: publish conflict")

// PublishConflictError is an [ErrPublishConflict] naming the partitions
// both main and the branch replaced since the branch's base.
type PublishConflictError struct {
	Branch     string
	Partitions []string // canonical keys, sorted
}

func (e *PublishConflictError) Error() string {
	names := make([]string, len(e.Partitions))
	for i, p := range e.Partitions {
		names[i] = p
		if p == "" { // the one partition of an unpartitioned table
			names[i] = "the unpartitioned table"
		}
	}
	return fmt.Sprintf("%v: main replaced %s after branch %s was cut or last published (WithForce lets the branch win)",
		ErrPublishConflict, strings.Join(names, ", "), e.Branch)
}

func (e *PublishConflictError) Is(target error) bool { return target == ErrPublishConflict }

// ErrBranchExpired means a publish cannot tell what the branch wrote since
// its base: a snapshot on the branch's ancestry, or on main's before the
// base, was expired. Nothing was published. Publishing before expiring
// (or expiring while keeping the branch's snapshots since its base) avoids
// it; a fast-forward (main still at the base) is not affected.
var ErrBranchExpired = errors.New("commit: the branch's history was expired")

// ErrBranchSpecChanged means the branch wrote partitions under another
// partition spec than main's current one, and main moved since the
// branch's base: its keys name other rows under the current spec, so the
// publish cannot re-plan them (the branch's writes under the old spec stay
// on its history). Nothing was published. A branch cut again (after
// dropping it) and written under the current spec publishes.
var ErrBranchSpecChanged = errors.New("commit: branch written under another partition spec")
