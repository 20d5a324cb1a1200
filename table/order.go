package table

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// orderValue is one ordering column's value of a row: an integer (also
// dates, times and timestamps in their units), or a string; the zero
// value is a null, lower than every value.
type orderValue struct {
	valid bool
	i     int64
	s     string
}

func (a orderValue) compare(b orderValue) int {
	switch {
	case !a.valid || !b.valid:
		return cmp.Compare(boolInt(a.valid), boolInt(b.valid))
	case a.s != "" || b.s != "":
		return strings.Compare(a.s, b.s)
	}
	return cmp.Compare(a.i, b.i)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// orderKey is a row's values of the ordering columns, compared
// lexicographically: the first column decides, the next breaks its ties,
// and so on. A nil orderKey (no ordering columns, or nothing stored) is
// lower than every other.
type orderKey []orderValue

func (a orderKey) compare(b orderKey) int {
	for i := range min(len(a), len(b)) {
		if d := a[i].compare(b[i]); d != 0 {
			return d
		}
	}
	return cmp.Compare(len(a), len(b))
}

// orderColumns returns the order key of each row of rec, made of the
// columns names (none: every row has the empty key).
func orderColumns(rec arrow.RecordBatch, names []string) (func(int) orderKey, error) {
	cols := make([]func(int) orderValue, len(names))
	for i, name := range names {
		get, err := orderColumn(rec, name)
		if err != nil {
			return nil, err
		}
		cols[i] = get
	}
	return func(row int) orderKey {
		if len(cols) == 0 {
			return nil
		}
		out := make(orderKey, len(cols))
		for i, get := range cols {
			out[i] = get(row)
		}
		return out
	}, nil
}

// orderColumn returns the order value of each row of rec's column name.
func orderColumn(rec arrow.RecordBatch, name string) (func(int) orderValue, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: order column %q is not in the table", ErrBadOption, name)
	}
	col := rec.Column(idx[0])
	var get func(int) orderValue
	switch a := col.(type) {
	case *array.Int32:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Int64:
		get = func(i int) orderValue { return orderValue{valid: true, i: a.Value(i)} }
	case *array.Date32:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Time64:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Timestamp:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.String:
		get = func(i int) orderValue { return orderValue{valid: true, s: "\x00" + a.Value(i)} }
	default:
		return nil, fmt.Errorf("%w: order column %q has type %s, want an integer, date, time, timestamp or string", ErrBadOption, name, col.DataType())
	}
	return func(i int) orderValue {
		if col.IsNull(i) {
			return orderValue{}
		}
		return get(i)
	}, nil
}
