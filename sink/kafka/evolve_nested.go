package kafka

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/sink"
)

// holdsStruct reports whether a column of type t has a struct, at the top
// or inside lists and map values: a column that can gain fields.
func holdsStruct(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StructType:
		return true
	case *arrow.MapType:
		return holdsStruct(t.ItemType())
	case arrow.ListLikeType:
		return holdsStruct(t.Elem())
	}
	return false
}

// newInside is what t, the type of values of a column of type col, has
// that col lacks: the fields new to col's structs (at any depth, inside
// lists and map values), within the structs, lists and maps leading to
// them; nil when there is none or t does not have col's shape (its values
// are then rejected, not added). A field with an empty name or a dot in
// it is not added.
func newInside(t iceberg.Type, col arrow.DataType) iceberg.Type {
	switch tt := t.(type) {
	case *iceberg.StructType:
		ct, ok := col.(*arrow.StructType)
		if !ok {
			return nil
		}
		var out []iceberg.NestedField
		for _, f := range tt.FieldList {
			cf, ok := ct.FieldByName(f.Name)
			if !ok {
				if f.Name != "" && !strings.Contains(f.Name, ".") {
					out = append(out, f)
				}
				continue
			}
			if sub := newInside(f.Type, cf.Type); sub != nil {
				f.Type = sub
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return &iceberg.StructType{FieldList: out}
	case *iceberg.ListType:
		if _, ok := col.(*arrow.MapType); ok {
			return nil
		}
		ct, ok := col.(arrow.ListLikeType)
		if !ok {
			return nil
		}
		if sub := newInside(tt.Element, ct.Elem()); sub != nil {
			return &iceberg.ListType{ElementID: tt.ElementID, Element: sub}
		}
	case *iceberg.MapType:
		ct, ok := col.(*arrow.MapType)
		if !ok {
			return nil
		}
		if sub := newInside(tt.ValueType, ct.ItemType()); sub != nil {
			return &iceberg.MapType{KeyID: tt.KeyID, KeyType: tt.KeyType, ValueID: tt.ValueID, ValueType: sub}
		}
	}
	return nil
}

// newNestedFields are the fields of the writer's records inside the
// columns plan maps its fields to that those columns lack, as columns of
// the table's names for sink.AddColumns. A field of a type with no
// Iceberg type (a union of several) adds nothing.
func newNestedFields(w *avro.RecordSchema, plan *recordPlan, sc *arrow.Schema) []sink.Column {
	var out []sink.Column
	for i, wf := range w.Fields() {
		st := plan.steps[i]
		if st.dec == nil || !holdsStruct(sc.Field(st.col).Type) {
			continue
		}
		t, err := icebergType(wf.Type())
		if err != nil {
			continue
		}
		if sub := newInside(t, sc.Field(st.col).Type); sub != nil {
			out = append(out, sink.Column{Name: sc.Field(st.col).Name, Type: sub})
		}
	}
	return out
}
