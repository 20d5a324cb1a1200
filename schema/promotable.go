package schema

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Promotable reports whether values of the primitive Iceberg type from can
// be written to a table column of type to: the rule [Resolve] applies to
// an input column of the Arrow type iceberg-go reads and writes for from
// (int to long, float to double, decimal precision up with the same scale,
// and the same type). Long to double is not promotable (a long above 2^53
// does not survive it), nor is any narrowing. Nested types are not
// promotable as a whole: compare their fields.
func Promotable(from, to iceberg.Type) bool {
	if from == nil || to == nil {
		return false
	}
	if from.Equals(to) {
		return true
	}
	if _, nested := from.(iceberg.NestedType); nested {
		return false
	}
	if _, nested := to.(iceberg.NestedType); nested {
		return false
	}
	in, err := table.TypeToArrowType(from, false, false)
	if err != nil {
		return false
	}
	out, err := table.TypeToArrowType(to, false, false)
	if err != nil {
		return false
	}
	_, err = leaf(in, to, out)
	return err == nil
}
