package partition

import (
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
)

// ErrBadRange reports a key range that cannot be enumerated: start after
// end, a spec without exactly one time field, keys that differ in another
// field, a null time value, a count below one or a range beyond
// [MaxRangeKeys] or the years 0000-9999.
var ErrBadRange = errors.New("partition: bad key range")

// MaxRangeKeys bounds the keys [Spec.Range] and [Spec.Last] return, so that
// a typo in a year cannot allocate millions of keys.
const MaxRangeKeys = 1_000_000

// Range returns the keys from start to end, both included, oldest first.
//
// The spec must have exactly one time field: a year, month, day or hour
// transform, or identity on a date column. Every other field of start and
// end must be equal, and is copied to every key of the range. Hours are
// UTC hours (Iceberg timestamps are UTC): a range across a daylight-saving
// change has no gap and no repeated hour. Identity on a timestamp column
// has no natural step and is refused. Nothing reads the clock: both ends
// are the caller's. Errors wrap [ErrBadRange], [ErrWrongSpec] or
// [ErrMalformedKey].
func (s *Spec) Range(start, end Key) ([]Key, error) {
	tf, a, vals, err := s.timeOrdinal(start)
	if err != nil {
		return nil, err
	}
	_, b, endVals, err := s.timeOrdinal(end)
	if err != nil {
		return nil, err
	}
	for i := range s.fields {
		if i != tf && s.fields[i].text(vals[i]) != s.fields[i].text(endVals[i]) {
			return nil, fmt.Errorf("%w: %s to %s: field %s differs", ErrBadRange, start, end, s.fields[i].name)
		}
	}
	switch {
	case a > b:
		return nil, fmt.Errorf("%w: start %s is after end %s", ErrBadRange, start, end)
	case b-a >= MaxRangeKeys:
		return nil, fmt.Errorf("%w: %s to %s is %d keys, more than %d", ErrBadRange, start, end, b-a+1, MaxRangeKeys)
	}

	return s.enumerate(tf, vals, a, b), nil
}

// Last returns the n keys ending at end (end included), oldest first: the
// window of a lookback of n partitions. See [Spec.Range] for the specs it
// accepts.
func (s *Spec) Last(end Key, n int) ([]Key, error) {
	if n < 1 || n > MaxRangeKeys {
		return nil, fmt.Errorf("%w: last %d keys ending at %s", ErrBadRange, n, end)
	}
	tf, b, vals, err := s.timeOrdinal(end)
	if err != nil {
		return nil, err
	}
	a := b - int64(n) + 1
	if lo, _ := s.fields[tf].ordinalBounds(); a < lo {
		return nil, fmt.Errorf("%w: last %d keys ending at %s start before year 0000", ErrBadRange, n, end)
	}

	return s.enumerate(tf, vals, a, b), nil
}

// enumerate makes the keys whose time field tf runs from a to b, the other
// fields taken from vals.
func (s *Spec) enumerate(tf int, vals []any, a, b int64) []Key {
	out := make([]Key, 0, b-a+1)
	vals = append([]any(nil), vals...)
	for o := a; o <= b; o++ {
		vals[tf] = s.fields[tf].fromOrdinal(o)
		out = append(out, s.key(vals))
	}

	return out
}

// timeOrdinal returns the index of s's only time field, the ordinal of k's
// value in it (days, hours, months or years since 1970) and k's values.
func (s *Spec) timeOrdinal(k Key) (tf int, ord int64, vals []any, err error) {
	if err := s.check(k); err != nil {
		return 0, 0, nil, err
	}
	tf = -1
	for i := range s.fields {
		if s.fields[i].isTime() {
			if tf >= 0 {
				return 0, 0, nil, fmt.Errorf("%w: spec %d has two time fields, %s and %s", ErrBadRange, s.id, s.fields[tf].name, s.fields[i].name)
			}
			tf = i
		}
	}
	if tf < 0 {
		return 0, 0, nil, fmt.Errorf("%w: spec %d has no year, month, day or hour field, nor identity on a date", ErrBadRange, s.id)
	}
	if vals, err = s.parse(k.text); err != nil {
		return 0, 0, nil, err
	}
	switch v := vals[tf].(type) {
	case int32:
		ord = int64(v)
	case iceberg.Date:
		ord = int64(v)
	default: // nil: a null partition value
		return 0, 0, nil, fmt.Errorf("%w: key %s: field %s is null", ErrBadRange, k, s.fields[tf].name)
	}

	return tf, ord, vals, nil
}

// isTime reports whether f's values form a calendar sequence.
func (f *field) isTime() bool {
	switch f.tk {
	case transformYear, transformMonth, transformDay, transformHour:
		return true
	case transformIdentity:
		_, ok := f.srcType.(iceberg.DateType)
		return ok
	}

	return false
}

// ordinalBounds is the range of ordinals of years 0000 to 9999.
func (f *field) ordinalBounds() (lo, hi int64) {
	switch f.vt.kind {
	case kindYear:
		return -1970, 9999 - 1970
	case kindMonth:
		return -1970 * 12, (9999-1970)*12 + 11
	case kindHour:
		return minDay * hoursPerDay, maxDay*hoursPerDay + hoursPerDay - 1
	}

	return minDay, maxDay
}

// fromOrdinal is the partition value of ordinal o, in the Go type of f.
func (f *field) fromOrdinal(o int64) any {
	if f.vt.kind == kindDate {
		return iceberg.Date(o)
	}

	return int32(o)
}
