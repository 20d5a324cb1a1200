package partition

import (
	"errors"
	"fmt"
)

var (
	// ErrRowOutside reports a row whose partition value differs from the key
	// it was written to.
	ErrRowOutside = errors.New("partition: row outside key")
	// ErrMalformedKey reports key text or partition values that do not make
	// a key of the spec: an unknown, duplicate or missing field, or a bad value.
	ErrMalformedKey = errors.New("partition: malformed key")
	// ErrBadValue reports a source value no partition key can hold: a
	// decimal with more digits than its column's precision, a date or
	// timestamp outside the years 0000-9999 that key text spells, a time
	// outside a day, a string that is not UTF-8, or a value a transform
	// fails on. The message names the row and the partition field.
	ErrBadValue = errors.New("partition: bad source value")
	// ErrWrongSpec reports a key used with a spec of another spec id.
	ErrWrongSpec = errors.New("partition: key of another spec")
	// ErrUnsupportedSpec reports a partition spec [NewSpec] cannot compile:
	// a transform iceberg-go does not know or that cannot apply to its
	// source column's type (year of a string, truncate of a date), a
	// transform of several source columns, a source column missing from
	// the schema, two fields of one name. Another engine or a hand edit
	// made the table; no write to it can be partitioned.
	ErrUnsupportedSpec = errors.New("partition: unsupported partition spec")
)

// keyError is a malformed key or value; it wraps ErrMalformedKey.
type keyError struct {
	subject string // `key "..."` or "values"
	field   string // partition field name, "" when not about one field
	msg     string
}

func (e *keyError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("partition: %s: %s", e.subject, e.msg)
	}

	return fmt.Sprintf("partition: %s: field %s: %s", e.subject, e.field, e.msg)
}

func (e *keyError) Unwrap() error { return ErrMalformedKey }

// RowOutsideError is a row outside its key; it wraps [ErrRowOutside]. Row
// is the row's position in the batch that was checked (0 for its first
// row): a caller that reads its input in batches adds the rows before the
// batch to name the row's place in the input.
type RowOutsideError struct {
	Row   int
	Value string // "name=value" of the offending row, canonical
	Key   string // the key's text
}

func (e *RowOutsideError) Error() string {
	return fmt.Sprintf("partition: row %d has %s, outside key %s", e.Row, e.Value, e.Key)
}

func (e *RowOutsideError) Unwrap() error { return ErrRowOutside }
