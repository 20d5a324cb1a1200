package partition

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// RowKeys computes the key of every row of rec, laid out as for
// [Spec.Matcher]. It returns the distinct keys in order of first
// appearance, and for each row the index of its key in keys. It is the
// router of a dynamic replace; it boxes each value, so it is slower than a
// Matcher, which static replaces use.
//
// A source value no key can hold (see [ErrBadValue]) fails with an error
// wrapping ErrBadValue that names its row; no input makes RowKeys panic.
func (s *Spec) RowKeys(rec arrow.RecordBatch) (keys []Key, rowKey []int, err error) {
	defer recoverValue("row keys", &err)
	paths := columnPaths(rec.Schema())
	cols := make([]source, len(s.fields))
	for i := range s.fields {
		f := &s.fields[i]
		if f.tk == transformVoid {
			continue
		}
		path, ok := paths[f.sourceID]
		if !ok {
			return nil, nil, fmt.Errorf("partition: field %s: source column %s (id %d) not in Arrow schema", f.name, f.source, f.sourceID)
		}
		if cols[i].col, cols[i].n, err = column(rec, path); err != nil {
			return nil, nil, fmt.Errorf("partition: field %s: %w", f.name, err)
		}
		if typ := cols[i].col.DataType(); !arrowFits(f.srcType, typ) {
			return nil, nil, fmt.Errorf("partition: field %s: source column %s is Arrow %s, want the Arrow form of %s", f.name, f.source, typ, f.srcType)
		}
		if err := f.checkSource(cols[i].col, cols[i].n); err != nil {
			return nil, nil, err
		}
	}
	index := make(map[string]int)
	rowKey = make([]int, rec.NumRows())
	parts := make([]string, len(s.fields))
	vals, prev := make([]any, len(s.fields)), make([]any, len(s.fields))
	var b strings.Builder
	for r := 0; r < len(rowKey); {
		// The rows from r whose source values equal row r's have its key
		// (transforms are functions): found without boxing a value.
		end := runEnd(cols, r, len(rowKey))
		ki := -1
		for i := range s.fields {
			vals[i] = nil
			if cols[i].col != nil {
				vals[i] = s.fields[i].apply(sourceValue(cols[i].col, cols[i].n, r, s.fields[i].srcType))
			}
		}
		// Rows of one partition mostly come in runs: a row whose values
		// equal the previous row's has its key.
		if r > 0 && sameValues(vals, prev) {
			ki = rowKey[r-1]
		} else {
			vals, prev = prev, vals
			b.Reset()
			for i := range s.fields {
				parts[i] = s.fields[i].text(prev[i])
				if i > 0 {
					b.WriteByte('/')
				}
				b.WriteString(parts[i])
			}
			text := b.String()
			var ok bool
			if ki, ok = index[text]; !ok {
				if err := s.checkRowKey(text, cols, r); err != nil {
					return nil, nil, err
				}
				ki = len(keys)
				index[text] = ki
				keys = append(keys, Key{spec: s.id, valid: true, text: text})
			}
		}
		for ; r < end; r++ {
			rowKey[r] = ki
		}
	}
	return keys, rowKey, nil
}

// source is the column and nulls of a partition field's source.
type source struct {
	col arrow.Array // nil for a void field
	n   nulls
}

// runEnd is the end of the run of rows from r (before limit) whose
// source values have row r's bits: null beside null, or equal integers,
// dates, times, timestamps, strings, binaries or booleans. Other kinds
// make runs of one row (their boxed values decide).
func runEnd(cols []source, r, limit int) int {
	for _, c := range cols {
		if c.col == nil {
			continue
		}
		limit = c.runEnd(r, limit)
		if limit == r+1 {
			break
		}
	}
	return limit
}

func (c source) runEnd(r, limit int) int {
	if !c.n.any() {
		switch a := c.col.(type) {
		case *array.Int32:
			return runOf(a.Int32Values(), r, limit)
		case *array.Int64:
			return runOf(a.Int64Values(), r, limit)
		case *array.Date32:
			return runOf(a.Date32Values(), r, limit)
		case *array.Time64:
			return runOf(a.Time64Values(), r, limit)
		case *array.Timestamp:
			return runOf(a.TimestampValues(), r, limit)
		}
	}
	e := r + 1
	for e < limit && c.same(e) {
		e++
	}
	return e
}

// runOf is the end of the run of values equal to v[r], before limit.
func runOf[T comparable](v []T, r, limit int) int {
	x, e := v[r], r+1
	for e < limit && v[e] == x {
		e++
	}
	return e
}

// same reports whether row e has the bits of row e-1.
func (c source) same(e int) bool {
	if null := c.n.at(e); null != c.n.at(e-1) {
		return false
	} else if null {
		return true
	}
	switch a := c.col.(type) {
	case *array.Int32:
		return a.Value(e) == a.Value(e-1)
	case *array.Int64:
		return a.Value(e) == a.Value(e-1)
	case *array.Date32:
		return a.Value(e) == a.Value(e-1)
	case *array.Time64:
		return a.Value(e) == a.Value(e-1)
	case *array.Timestamp:
		return a.Value(e) == a.Value(e-1)
	case *array.String:
		return a.Value(e) == a.Value(e-1)
	case *array.LargeString:
		return a.Value(e) == a.Value(e-1)
	case *array.Binary:
		return string(a.Value(e)) == string(a.Value(e-1))
	case *array.Boolean:
		return a.Value(e) == a.Value(e-1)
	}
	return false
}

// sameValues reports whether the transformed values a and b are the same
// partition values, for the kinds whose equality is their text's: nulls,
// integers, dates, times, timestamps, strings and booleans. Floats
// (-0.0 equals 0.0, NaN nothing), decimals and binaries are never the
// same here, and take the slow path.
func sameValues(a, b []any) bool {
	for i, x := range a {
		if !sameValue(x, b[i]) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	switch a.(type) {
	case nil, int32, int64, iceberg.Date, iceberg.Time, iceberg.Timestamp, iceberg.TimestampNano, string, bool:
		return a == b // same dynamic type and value
	}
	return false
}
