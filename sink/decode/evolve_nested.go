package decode

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

// newInside is what t, the type of JSON values of a column of type col, has
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
// columns plan maps w's fields to that those columns lack, as columns of
// the table's names for sink.AddColumns.
func newNestedFields(w *avro.RecordSchema, plan *recordPlan, sc *arrow.Schema) []sink.Column {
	var out []sink.Column
	for i, wf := range w.Fields() {
		st := plan.steps[i]
		if st.dec == nil || !holdsStruct(sc.Field(st.col).Type) {
			continue
		}
		if sub := avroNewInside(wf.Type(), sc.Field(st.col).Type, 0); sub != nil {
			out = append(out, sink.Column{Name: sc.Field(st.col).Name, Type: sub})
		}
	}
	return out
}

// avroNewInside is newInside for Avro values of type w: the writer's
// record fields map to a struct's fields as the decoder maps them (field
// id, then name), and a new field's type is its Iceberg type (none for a
// union of several types: not added).
func avroNewInside(w avro.Schema, col arrow.DataType, depth int) iceberg.Type {
	if depth > 32 {
		return nil
	}
	switch w := deref(w).(type) {
	case *avro.UnionSchema:
		var only avro.Schema
		for _, t := range w.Types() {
			if t.Type() == avro.Null {
				continue
			}
			if only != nil {
				return nil
			}
			only = t
		}
		if only == nil {
			return nil
		}
		return avroNewInside(only, col, depth+1)
	case *avro.RecordSchema:
		ct, ok := col.(*arrow.StructType)
		if !ok {
			return nil
		}
		var out []iceberg.NestedField
		cols := matchFields(w, ct.Fields())
		for i, wf := range w.Fields() {
			if cols[i] < 0 {
				if t, err := icebergType(wf.Type()); err == nil {
					out = append(out, iceberg.NestedField{ID: len(out) + 1, Name: wf.Name(), Type: t})
				}
				continue
			}
			target := ct.Field(cols[i])
			if sub := avroNewInside(wf.Type(), target.Type, depth+1); sub != nil {
				out = append(out, iceberg.NestedField{ID: len(out) + 1, Name: target.Name, Type: sub})
			}
		}
		if len(out) == 0 {
			return nil
		}
		return &iceberg.StructType{FieldList: out}
	case *avro.ArraySchema:
		if _, ok := col.(*arrow.MapType); ok {
			return nil
		}
		ct, ok := col.(arrow.ListLikeType)
		if !ok {
			return nil
		}
		if sub := avroNewInside(w.Items(), ct.Elem(), depth+1); sub != nil {
			return &iceberg.ListType{ElementID: 1, Element: sub}
		}
	case *avro.MapSchema:
		ct, ok := col.(*arrow.MapType)
		if !ok {
			return nil
		}
		if sub := avroNewInside(w.Values(), ct.ItemType(), depth+1); sub != nil {
			return &iceberg.MapType{KeyID: 1, KeyType: iceberg.PrimitiveTypes.String, ValueID: 2, ValueType: sub}
		}
	}
	return nil
}
