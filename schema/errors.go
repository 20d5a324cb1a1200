package schema

import "errors"

// Errors a caller may branch on with [errors.Is]. Each error returned by this
// package wraps one of them and names the table column path (dotted, with
// "element", "key" and "value" for list and map children) it concerns.
var (
	// ErrMissingRequired reports a required table column that has no input
	// column, or that holds a null; at Apply time the message names the
	// first offending row.
	ErrMissingRequired = errors.New("schema: missing required column")

	// ErrIncompatibleType reports an input column whose type cannot be
	// written into its table column without loss: narrowing (long to int,
	// double to float, decimal precision down), a different kind (string to
	// long, list where a struct is expected), an unsupported encoding, a
	// value the promotion cannot hold (seconds beyond the microsecond
	// range), or a batch whose schema is not its reader's. The
	// message names the column path, the input Arrow type and the table type.
	ErrIncompatibleType = errors.New("schema: incompatible type")

	// ErrUnknownField reports input fields that match no table column, under
	// [RejectUnknown].
	ErrUnknownField = errors.New("schema: unknown field")

	// ErrAmbiguousField reports two input fields that resolve to the same
	// table column, for example the old and the new name of a renamed column.
	ErrAmbiguousField = errors.New("schema: ambiguous field")
)
