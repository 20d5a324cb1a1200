package schema

import (
	"slices"

	"github.com/apache/iceberg-go"
)

// MergeMapping returns the name mapping nm extended so that every field of
// sch, at every depth, is found under its current name as well as under
// every name nm already knows for its ID. After a rename, the old name
// stays as an alias: a producer that still sends it keeps resolving. It
// reports whether anything was added. A nil nm starts from sch's own
// mapping.
func MergeMapping(nm iceberg.NameMapping, sch *iceberg.Schema) (iceberg.NameMapping, bool) {
	current := sch.NameMapping()
	if nm == nil {
		return current, true
	}
	return mergeFields(nm, current)
}

func mergeFields(old, cur []iceberg.MappedField) ([]iceberg.MappedField, bool) {
	out := slices.Clone(old)
	changed := false
	for _, c := range cur {
		i := slices.IndexFunc(out, func(m iceberg.MappedField) bool {
			return m.FieldID != nil && c.FieldID != nil && *m.FieldID == *c.FieldID
		})
		if i < 0 {
			out = append(out, c)
			changed = true
			continue
		}
		m := out[i]
		for _, n := range c.Names {
			if !slices.Contains(m.Names, n) {
				m.Names = append(slices.Clone(m.Names), n)
				changed = true
			}
		}
		if len(c.Fields) > 0 {
			fields, ch := mergeFields(m.Fields, c.Fields)
			m.Fields, changed = fields, changed || ch
		}
		out[i] = m
	}
	return out, changed
}
