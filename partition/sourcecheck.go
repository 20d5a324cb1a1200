package partition

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// valueError is a source value no key can hold; it wraps ErrBadValue.
type valueError struct {
	row   int
	field string // partition field name
	msg   string
}

func (e *valueError) Error() string {
	return fmt.Sprintf("partition: row %d: field %s: %s", e.row, e.field, e.msg)
}

func (e *valueError) Unwrap() error { return ErrBadValue }

// recoverValue turns a panic of a dependency during op (iceberg-go's
// transforms and arrow's decimal arithmetic panic on some values) into an
// error wrapping ErrBadValue in *err. The values that make them panic are
// refused before the transforms run; this is the boundary's last guard.
func recoverValue(op string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("partition: %s: %w: a transform failed: %v", op, ErrBadValue, r)
	}
}

// checkSource fails with a valueError for the first row of col, f's
// source column with nulls n, whose value f's transform must not be
// given: a decimal with more digits than the source column's precision
// (truncating it may overflow 128 bits).
func (f *field) checkSource(col arrow.Array, n nulls) error {
	dt, ok := f.srcType.(iceberg.DecimalType)
	d, isDec := col.(*array.Decimal128)
	if !ok || !isDec || dt.Precision() <= 0 || dt.Precision() > maxDecimalDigits {
		return nil
	}
	limit := decimal128.GetScaleMultiplier(dt.Precision()) // 10^P
	least := limit.Negate()
	for i, v := range d.Values() {
		if (v.LessEqual(least) || v.GreaterEqual(limit)) && !n.at(i) {
			return &valueError{row: i, field: f.name, msg: fmt.Sprintf("source %s holds a value of more than %d digits, beyond its type %s",
				f.source, dt.Precision(), dt)}
		}
	}

	return nil
}

// checkRowKey fails with a valueError unless text, the key RowKeys made
// for row r from the source columns cols, is a key: its text parses back
// to itself (a date in the years 0000-9999, a time within a day, UTF-8),
// and row r is in it by the kernels a Matcher of the key uses (a
// transform whose result overflowed would put the row in another key).
// It runs once per distinct key of a batch.
func (s *Spec) checkRowKey(text string, cols []source, r int) error {
	fail := func(field, format string, args ...any) error {
		return &valueError{row: r, field: field, msg: fmt.Sprintf(format, args...)}
	}
	vals, err := s.parse(text)
	if err != nil {
		var ke *keyError
		field := ""
		if errors.As(err, &ke) {
			field = ke.field
		}

		return fail(field, "no partition key can hold its value: %v", err)
	}
	if got := s.key(vals).text; got != text {
		return fail("", "its key %q reads back as %q", text, got)
	}
	for i := range s.fields {
		f := &s.fields[i]
		c := cols[i]
		if c.col == nil {
			continue
		}
		k := f.kernel(vals[i])
		one := array.NewSlice(c.col, int64(r), int64(r+1))
		n := nulls{leaf: one}
		if c.n.parent != nil {
			n.parent = c.n.parent[r : r+1]
		}
		out := k == nil || k.next(one, n, 0) == 0
		one.Release()
		if out {
			return fail(f.name, "its %s transform gives %s, a key the row is not in (the result overflows)", f.name, f.text(vals[i]))
		}
	}

	return nil
}
