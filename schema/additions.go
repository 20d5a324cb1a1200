package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
)

// ErrBadColumn reports a column or nested field given to [Additions] with
// an empty name or no type.
var ErrBadColumn = errors.New("schema: column with an empty name or no type")

// Addition is a column or nested field a table lacks: its path from the
// top-level column (a list's element is "element", a map's value
// "value") and its type.
type Addition struct {
	Path []string
	Type iceberg.Type
}

// String is the addition's dotted path and type: "geo.alt double".
func (a Addition) String() string { return strings.Join(a.Path, ".") + " " + a.Type.String() }

// Additions returns what cols (columns by name and type; their field ids
// and Required are ignored) add to sch: a column sch has no top-level
// column of that name (case-sensitive) for, whole, and for a column sch
// has, the fields its structs (at any depth, also inside lists and maps)
// lack. A column or field sch has must [Fits] it, else Additions fails
// with [ErrIncompatibleType] naming its path and both types; a column
// with an empty name or no type fails with [ErrBadColumn]. A column given
// twice is added once. Nothing to add returns an empty slice: the rerun
// of a schema change made is a no-op.
func Additions(sch *iceberg.Schema, cols []iceberg.NestedField) ([]Addition, error) {
	var out []Addition
	top := sch.AsStruct()
	for _, c := range cols {
		if c.Name == "" || c.Type == nil {
			return nil, fmt.Errorf("%w: %q %v", ErrBadColumn, c.Name, c.Type)
		}
		f, ok := structField(&top, c.Name)
		if !ok {
			out = addOnce(out, Addition{Path: []string{c.Name}, Type: c.Type})
			continue
		}
		var err error
		if out, err = nestedAdditions(out, []string{c.Name}, c.Type, f.Type); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addOnce appends a to out unless out holds its path already.
func addOnce(out []Addition, a Addition) []Addition {
	if slices.ContainsFunc(out, func(b Addition) bool { return slices.Equal(a.Path, b.Path) }) {
		return out
	}
	return append(out, a)
}

// nestedAdditions appends to out the fields of v (the type of the
// values at path) that col, the column's type, lacks.
func nestedAdditions(out []Addition, path []string, v, col iceberg.Type) ([]Addition, error) {
	at := func(name string) []string { return append(slices.Clone(path), name) }
	switch vt := v.(type) {
	case *iceberg.StructType:
		ct, ok := col.(*iceberg.StructType)
		if !ok {
			break
		}
		for _, f := range vt.FieldList {
			if f.Name == "" || f.Type == nil {
				return nil, fmt.Errorf("%w: a field of %s: %q %v", ErrBadColumn, strings.Join(path, "."), f.Name, f.Type)
			}
			cf, ok := structField(ct, f.Name)
			if !ok {
				out = addOnce(out, Addition{Path: at(f.Name), Type: f.Type})
				continue
			}
			var err error
			if out, err = nestedAdditions(out, at(f.Name), f.Type, cf.Type); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *iceberg.ListType:
		if ct, ok := col.(*iceberg.ListType); ok {
			return nestedAdditions(out, at("element"), vt.Element, ct.Element)
		}
	case *iceberg.MapType:
		if ct, ok := col.(*iceberg.MapType); ok && Fits(vt.KeyType, ct.KeyType) {
			return nestedAdditions(out, at("value"), vt.ValueType, ct.ValueType)
		}
	default:
		if Fits(v, col) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: %s is %s, the new type is %s", ErrIncompatibleType, strings.Join(path, "."), col, v)
}

// Fits reports whether values of Iceberg type v can be written to a table
// column of type col as they are: primitives by [Promotable] (the rule
// [Resolve] applies to input columns: int to long, float to double,
// decimal precision up; never long to double), structs field by field
// (fields col lacks are not compared: they are additions), lists by
// element, maps by key and value.
func Fits(v, col iceberg.Type) bool {
	switch v := v.(type) {
	case *iceberg.StructType:
		cs, ok := col.(*iceberg.StructType)
		if !ok {
			return false
		}
		for _, f := range v.FieldList {
			if cf, ok := structField(cs, f.Name); ok && !Fits(f.Type, cf.Type) {
				return false
			}
		}
		return true
	case *iceberg.ListType:
		cl, ok := col.(*iceberg.ListType)
		return ok && Fits(v.Element, cl.Element)
	case *iceberg.MapType:
		cm, ok := col.(*iceberg.MapType)
		return ok && Fits(v.KeyType, cm.KeyType) && Fits(v.ValueType, cm.ValueType)
	}
	return Promotable(v, col)
}

func structField(st *iceberg.StructType, name string) (iceberg.NestedField, bool) {
	for _, f := range st.FieldList {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}
