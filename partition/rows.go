package partition

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
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
	var b strings.Builder
	for r := range rowKey {
		b.Reset()
		for i := range s.fields {
			f := &s.fields[i]
			var v any
			if cols[i].col != nil {
				v = f.apply(sourceValue(cols[i].col, cols[i].n, r, f.srcType))
			}
			parts[i] = f.text(v)
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
