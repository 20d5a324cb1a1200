package decode

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// padMissing appends a null to every field builder below b that is shorter
// than its struct: Arrow's JSON reader appends nothing to a required
// (non-nullable) field of a struct when the object lacks it, which leaves
// the struct longer than its field and makes a batch that crashes the
// Parquet writer. The null is then refused as a missing required value,
// for that record alone.
func padMissing(b array.Builder) {
	switch b := b.(type) {
	case *array.StructBuilder:
		for i := 0; i < b.NumField(); i++ {
			f := b.FieldBuilder(i)
			for f.Len() < b.Len() {
				f.AppendNull()
			}
			padMissing(f)
		}
	case *array.ListBuilder:
		padMissing(b.ValueBuilder())
	case *array.LargeListBuilder:
		padMissing(b.ValueBuilder())
	case *array.FixedSizeListBuilder:
		padMissing(b.ValueBuilder())
	case *array.MapBuilder:
		padMissing(b.KeyBuilder())
		padMissing(b.ItemBuilder())
	}
}

// hasRequiredInStruct reports whether t holds a struct with a required
// field at any depth (the only case padMissing has work to do).
func hasRequiredInStruct(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if !f.Nullable || hasRequiredInStruct(f.Type) {
				return true
			}
		}
	case arrow.ListLikeType:
		return hasRequiredInStruct(t.Elem())
	}
	return false
}
