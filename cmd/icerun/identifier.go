package main

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// withIdentifierFields is sch with the named top-level columns as its
// identifier fields (Iceberg's identifier-field-ids: the row key), sch
// itself when names is empty. Each must be a required primitive column,
// as the Iceberg spec asks of identifier fields.
func withIdentifierFields(sch *iceberg.Schema, names []string) (*iceberg.Schema, error) {
	if len(names) == 0 {
		return sch, nil
	}
	ids := make([]int, 0, len(names))
	for _, list := range names {
		for _, name := range strings.Split(list, ",") {
			f, ok := topLevelField(sch, name)
			switch {
			case !ok:
				return nil, fmt.Errorf("%q is not a top-level column of the schema", name)
			case !f.Required:
				return nil, fmt.Errorf("column %q is optional; an identifier field must be required", name)
			}
			if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
				return nil, fmt.Errorf("column %q is a %s; an identifier field must be of a primitive type", name, f.Type)
			}
			ids = append(ids, f.ID)
		}
	}
	return iceberg.NewSchemaWithIdentifiers(sch.ID, ids, sch.Fields()...), nil
}

func topLevelField(sch *iceberg.Schema, name string) (iceberg.NestedField, bool) {
	for _, f := range sch.Fields() {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// identifierKey is the comma-separated names of the table's identifier
// fields, in their order, "" when it declares none.
func identifierKey(sch *iceberg.Schema) string {
	names := make([]string, 0, len(sch.IdentifierFieldIDs))
	for _, id := range sch.IdentifierFieldIDs {
		if name, ok := sch.FindColumnName(id); ok {
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}
