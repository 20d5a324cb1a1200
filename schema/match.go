package schema

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// match returns the index in tbl of the table field that input field f
// resolves to, or -1 if none: by f's field ID if it has one, else through
// the name mapping of this level, else by the current column name. The
// position of f among its siblings plays no part.
func match(f arrow.Field, tbl []iceberg.NestedField, mapped []iceberg.MappedField) (int, error) {
	id, ok, err := fieldID(f)
	if err != nil {
		return -1, err
	}
	if ok {
		return indexByID(tbl, id), nil
	}

	for _, m := range mapped {
		if m.FieldID != nil && slices.Contains(m.Names, f.Name) {
			if k := indexByID(tbl, *m.FieldID); k >= 0 {
				return k, nil
			}
		}
	}

	return slices.IndexFunc(tbl, func(t iceberg.NestedField) bool { return t.Name == f.Name }), nil
}

func indexByID(tbl []iceberg.NestedField, id int) int {
	return slices.IndexFunc(tbl, func(t iceberg.NestedField) bool { return t.ID == id })
}

// fieldID returns f's PARQUET:field_id, if it has one.
func fieldID(f arrow.Field) (int, bool, error) {
	s, ok := f.Metadata.GetValue(table.ArrowParquetFieldIDKey)
	if !ok {
		return 0, false, nil
	}
	id, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, fmt.Errorf("invalid %s %q", table.ArrowParquetFieldIDKey, s)
	}
	if id < 0 { // Parquet files written without field IDs read back as -1
		return 0, false, nil
	}
	return id, true, nil
}

// mappedChildren returns the name mapping of the children of the field with
// the given ID (or, lacking IDs, the given name) at this level.
func mappedChildren(mapped []iceberg.MappedField, id int, name string) []iceberg.MappedField {
	for _, m := range mapped {
		if m.FieldID != nil && *m.FieldID == id {
			return m.Fields
		}
	}
	for _, m := range mapped {
		if m.FieldID == nil && slices.Contains(m.Names, name) {
			return m.Fields
		}
	}
	return nil
}
