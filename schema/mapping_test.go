package schema

import (
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
)

// find returns the mapped field at the name path, or nil.
func find(nm []iceberg.MappedField, path ...string) *iceberg.MappedField {
	for _, m := range nm {
		if slices.Contains(m.Names, path[0]) {
			if len(path) == 1 {
				return &m
			}
			return find(m.Fields, path[1:]...)
		}
	}
	return nil
}

func TestMergeMappingKeepsOldNamesAsAliases(t *testing.T) {
	before := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "currency", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "zip", Type: iceberg.PrimitiveTypes.String},
		}}},
	)
	after := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "currency_code", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "addr", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "postcode", Type: iceberg.PrimitiveTypes.String},
		}}},
		iceberg.NestedField{ID: 5, Name: "note", Type: iceberg.PrimitiveTypes.String},
	)
	got, changed := MergeMapping(before.NameMapping(), after)
	if !changed {
		t.Fatal("MergeMapping(renamed) changed = false, want true")
	}
	if f := find(got, "currency"); f == nil || *f.FieldID != 2 {
		t.Errorf("Find(currency) = %v, want field 2", f)
	}
	if f := find(got, "currency_code"); f == nil || *f.FieldID != 2 {
		t.Errorf("Find(currency_code) = %v, want field 2", f)
	}
	if f := find(got, "addr", "zip"); f == nil || *f.FieldID != 4 {
		t.Errorf("Find(addr.zip) = %v, want field 4", f)
	}
	if f := find(got, "addr", "postcode"); f == nil || *f.FieldID != 4 {
		t.Errorf("Find(addr.postcode) = %v, want field 4", f)
	}
	if f := find(got, "note"); f == nil || *f.FieldID != 5 {
		t.Errorf("Find(note) = %v, want field 5", f)
	}
	again, changed := MergeMapping(got, after)
	if changed || !slices.EqualFunc(again, got, func(a, b iceberg.MappedField) bool { return slices.Equal(a.Names, b.Names) }) {
		t.Errorf("MergeMapping is not idempotent: changed = %t", changed)
	}
}
