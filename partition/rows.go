package partition

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
)

// RowKeys computes the key of every row of rec, laid out as for
// [Spec.Matcher]. It returns the distinct keys in order of first
// appearance, and for each row the index of its key in keys. It is the
// router of a dynamic replace; it boxes each value, so it is slower than a
// Matcher, which static replaces use.
func (s *Spec) RowKeys(rec arrow.RecordBatch) (keys []Key, rowKey []int, err error) {
	paths := columnPaths(rec.Schema())
	type src struct {
		col arrow.Array
		n   nulls
	}
	cols := make([]src, len(s.fields))
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
	}
	index := make(map[string]int)
	rowKey = make([]int, rec.NumRows())
	parts := make([]string, len(s.fields))
	vals, prev := make([]any, len(s.fields)), make([]any, len(s.fields))
	var b strings.Builder
	for r := range rowKey {
		for i := range s.fields {
			vals[i] = nil
			if cols[i].col != nil {
				vals[i] = s.fields[i].apply(sourceValue(cols[i].col, cols[i].n, r, s.fields[i].srcType))
			}
		}
		// Rows of one partition mostly come in runs: a row whose values
		// equal the previous row's has its key.
		if r > 0 && sameValues(vals, prev) {
			rowKey[r] = rowKey[r-1]
			continue
		}
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
		ki, ok := index[text]
		if !ok {
			ki = len(keys)
			index[text] = ki
			keys = append(keys, Key{spec: s.id, valid: true, text: text})
		}
		rowKey[r] = ki
	}
	return keys, rowKey, nil
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
