package backfill

import (
	"errors"
	"os"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// deterministic lists errors that another attempt with the same input
// and code cannot fix: the input or the table is wrong, not the moment.
var deterministic = []error{
	schema.ErrMissingRequired, schema.ErrIncompatibleType, schema.ErrUnknownField, schema.ErrAmbiguousField,
	partition.ErrRowOutside, partition.ErrMalformedKey, partition.ErrWrongSpec, partition.ErrUnsupportedSpec, partition.ErrInvalidFieldName,
	table.ErrNilInput, table.ErrLateRows, table.ErrQuarantined, table.ErrUnsafePartitionValue, table.ErrBadOption,
	commit.ErrUnsupported, os.ErrNotExist, os.ErrPermission,
}

// retryable reports whether a failed group may succeed when tried again:
// conflicts, lost connections and other transient failures. Deterministic
// errors (bad input, missing input files, permissions) are not retried.
func retryable(err error) bool {
	for _, d := range deterministic {
		if errors.Is(err, d) {
			return false
		}
	}
	return true
}
