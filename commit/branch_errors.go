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
	return fmt.Sprintf("%v: main replaced %s after branch %s was cut or last published (WithForce lets the branch win)",
		ErrPublishConflict, strings.Join(e.Partitions, ", "), e.Branch)
}

func (e *PublishConflictError) Is(target error) bool { return target == ErrPublishConflict }
