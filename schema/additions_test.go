package schema

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// additionsTable has a long, a double, a struct, a list of structs and a
// map of structs.
func additionsTable() *iceberg.Schema {
	p := iceberg.PrimitiveTypes
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "n", Type: p.Int64},
		iceberg.NestedField{ID: 2, Name: "score", Type: p.Float64},
		iceberg.NestedField{ID: 3, Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 4, Name: "lat", Type: p.Float64},
		}}},
		iceberg.NestedField{ID: 5, Name: "lines", Type: &iceberg.ListType{ElementID: 6, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 7, Name: "sku", Type: p.String},
		}}}},
		iceberg.NestedField{ID: 8, Name: "attrs", Type: &iceberg.MapType{KeyID: 9, KeyType: p.String, ValueID: 10, ValueType: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 11, Name: "v", Type: p.String},
		}}}},
	)
}

func structOf(fields ...iceberg.NestedField) *iceberg.StructType {
	return &iceberg.StructType{FieldList: fields}
}

func TestAdditions(t *testing.T) {
	p := iceberg.PrimitiveTypes
	col := func(name string, typ iceberg.Type) iceberg.NestedField {
		return iceberg.NestedField{Name: name, Type: typ}
	}
	good := []struct {
		name string
		cols []iceberg.NestedField
		want []string
	}{
		{"new column", []iceberg.NestedField{col("note", p.String)}, []string{"note string"}},
		{"a column twice is added once", []iceberg.NestedField{col("note", p.String), col("note", p.String)}, []string{"note string"}},
		{"rerun: the table has it", []iceberg.NestedField{col("n", p.Int64), col("score", p.Float64)}, nil},
		{"int into long", []iceberg.NestedField{col("n", p.Int32)}, nil},
		{"float into double", []iceberg.NestedField{col("score", p.Float32)}, nil},
		{"struct field", []iceberg.NestedField{col("geo", structOf(col("lat", p.Float64), col("alt", p.Float64)))}, []string{"geo.alt double"}},
		{"list element field", []iceberg.NestedField{col("lines", &iceberg.ListType{Element: structOf(col("qty", p.Int64))})}, []string{"lines.element.qty long"}},
		{"map value field", []iceberg.NestedField{col("attrs", &iceberg.MapType{KeyType: p.String, ValueType: structOf(col("w", p.Int32))})}, []string{"attrs.value.w int"}},
		{"a dotted name is a new top-level column", []iceberg.NestedField{col("geo.lat", p.String)}, []string{"geo.lat string"}},
	}
	for _, tc := range good {
		got, err := Additions(additionsTable(), tc.cols)
		if err != nil {
			t.Errorf("%s: Additions = %v", tc.name, err)
			continue
		}
		var s []string
		for _, a := range got {
			s = append(s, a.String())
		}
		if !slices.Equal(s, tc.want) {
			t.Errorf("%s: Additions = %q, want %q", tc.name, s, tc.want)
		}
	}

	bad := []struct {
		name string
		cols []iceberg.NestedField
		want error
	}{
		{"long into double", []iceberg.NestedField{col("score", p.Int64)}, ErrIncompatibleType},
		{"string into a double field", []iceberg.NestedField{col("geo", structOf(col("lat", p.String)))}, ErrIncompatibleType},
		{"string into long", []iceberg.NestedField{col("note", p.String), col("n", p.String)}, ErrIncompatibleType},
		{"struct into primitive", []iceberg.NestedField{col("n", structOf(col("x", p.Int32)))}, ErrIncompatibleType},
		{"list into struct", []iceberg.NestedField{col("geo", &iceberg.ListType{Element: p.String})}, ErrIncompatibleType},
		{"map key differs", []iceberg.NestedField{col("attrs", &iceberg.MapType{KeyType: p.Int64, ValueType: structOf(col("w", p.Int32))})}, ErrIncompatibleType},
		{"empty name", []iceberg.NestedField{col("", p.String)}, ErrBadColumn},
		{"no type", []iceberg.NestedField{col("x", nil)}, ErrBadColumn},
		{"nested field without a name", []iceberg.NestedField{col("geo", structOf(col("", p.String)))}, ErrBadColumn},
	}
	for _, tc := range bad {
		got, err := Additions(additionsTable(), tc.cols)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Additions = %v, %v, want %v", tc.name, got, err, tc.want)
		}
	}
}

// Fits is Promotable on primitives and Resolve's rule: a type fits a
// column exactly when Resolve accepts an input column of its Arrow type.
func TestFits(t *testing.T) {
	p := iceberg.PrimitiveTypes
	cases := []struct {
		v, col iceberg.Type
		want   bool
	}{
		{p.Int32, p.Int64, true},
		{p.Float32, p.Float64, true},
		{iceberg.DecimalTypeOf(10, 2), iceberg.DecimalTypeOf(12, 2), true},
		{p.Int64, p.Float64, false},
		{p.Int64, p.Int32, false},
		{p.Int32, p.Float64, false},
		{structOf(iceberg.NestedField{Name: "a", Type: p.Int32}), structOf(iceberg.NestedField{Name: "a", Type: p.Int64}), true},
		{structOf(iceberg.NestedField{Name: "a", Type: p.Int64}), structOf(iceberg.NestedField{Name: "a", Type: p.Float64}), false},
		{&iceberg.ListType{Element: p.Int32}, &iceberg.ListType{Element: p.Int64}, true},
		{&iceberg.ListType{Element: p.Int64}, &iceberg.ListType{Element: p.Float64}, false},
		{&iceberg.MapType{KeyType: p.String, ValueType: p.Float32}, &iceberg.MapType{KeyType: p.String, ValueType: p.Float64}, true},
		{&iceberg.ListType{Element: p.Int32}, p.Int32, false},
	}
	for _, tc := range cases {
		if got := Fits(tc.v, tc.col); got != tc.want {
			t.Errorf("Fits(%s, %s) = %v, want %v", tc.v, tc.col, got, tc.want)
		}
		if got := resolvable(t, tc.v, tc.col); got != tc.want {
			t.Errorf("Resolve of %s into %s: %v, Fits says %v", tc.v, tc.col, got, tc.want)
		}
	}
}

// resolvable reports whether Resolve accepts an input column of v's Arrow
// type for a table column of type col.
func resolvable(t *testing.T, v, col iceberg.Type) bool {
	t.Helper()
	in, err := table.SchemaToArrowSchema(iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: renumbered(v, 1)}), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "c", Type: renumbered(col, 1)})
	_, err = Resolve(in, tbl, nil, IgnoreUnknown)
	if err != nil && !errors.Is(err, ErrIncompatibleType) {
		t.Fatalf("Resolve: %v", err)
	}
	return err == nil
}

// renumbered is t with field ids from base+1 on, in the same order for the
// same shape (so that two types of one shape match by id).
func renumbered(t iceberg.Type, base int) iceberg.Type {
	next := base
	var walk func(iceberg.Type) iceberg.Type
	walk = func(t iceberg.Type) iceberg.Type {
		switch t := t.(type) {
		case *iceberg.StructType:
			out := &iceberg.StructType{}
			for _, f := range t.FieldList {
				next++
				out.FieldList = append(out.FieldList, iceberg.NestedField{ID: next, Name: f.Name, Type: walk(f.Type)})
			}
			return out
		case *iceberg.ListType:
			next++
			return &iceberg.ListType{ElementID: next, Element: walk(t.Element), ElementRequired: false}
		case *iceberg.MapType:
			next += 2
			k, v := next-1, next
			return &iceberg.MapType{KeyID: k, KeyType: walk(t.KeyType), ValueID: v, ValueType: walk(t.ValueType)}
		}
		return t
	}
	return walk(t)
}

func ExampleAdditions() {
	tbl := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "score", Type: iceberg.PrimitiveTypes.Float64})
	adds, err := Additions(tbl, []iceberg.NestedField{
		{Name: "id", Type: iceberg.PrimitiveTypes.Int32},    // fits: int into long
		{Name: "note", Type: iceberg.PrimitiveTypes.String}, // new
	})
	fmt.Println(adds, err)
	_, err = Additions(tbl, []iceberg.NestedField{{Name: "score", Type: iceberg.PrimitiveTypes.Int64}})
	fmt.Println(errors.Is(err, ErrIncompatibleType))
	// Output:
	// [note string] <nil>
	// true
}
