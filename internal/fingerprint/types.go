package fingerprint

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow"
)

// appendTypes appends the canonical description of sc's column types,
// which the fingerprint's message starts with: the column count (uvarint)
// and each column's type (appendType). It is self-delimiting, so the rows
// that follow it are never taken for part of it.
//
// It describes what the rows' canonical bytes mean, not how Arrow holds
// them: types whose values encode alike and mean the same (string, large
// string and string view; a dictionary and its values; an extension and
// its storage) are described alike, so the same rows give the same
// fingerprint whichever of them a reader hands over. Column names are not
// described (a rename changes no value); nullability neither (a null is
// in the rows).
func appendTypes(dst []byte, sc *arrow.Schema) []byte {
	dst = binary.AppendUvarint(dst, uint64(sc.NumFields()))
	for _, f := range sc.Fields() {
		dst = appendType(dst, f.Type)
	}
	return dst
}

// appendType appends one type's description: a tag byte, then the tag's
// parameters and element types.
func appendType(dst []byte, dt arrow.DataType) []byte {
	switch t := dt.(type) {
	case *arrow.NullType:
		return append(dst, 'N')
	case *arrow.BooleanType:
		return append(dst, 'B')
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return append(dst, 'S')
	case *arrow.BinaryType, *arrow.LargeBinaryType, *arrow.BinaryViewType:
		return append(dst, 'Y')
	case *arrow.StructType:
		dst = binary.AppendUvarint(append(dst, 'T'), uint64(t.NumFields()))
		for _, f := range t.Fields() {
			dst = appendType(dst, f.Type)
		}
		return dst
	case *arrow.MapType: // before the lists: a map is a list too
		return appendType(appendType(append(dst, 'M'), t.KeyType()), t.ItemType())
	case *arrow.FixedSizeListType:
		return appendType(binary.AppendUvarint(append(dst, 'F'), uint64(t.Len())), t.Elem())
	case arrow.ListLikeType: // list, large list, list views
		return appendType(append(dst, 'L'), t.Elem())
	case arrow.UnionType: // sparse and dense values encode alike
		dst = binary.AppendUvarint(append(dst, 'U'), uint64(len(t.Fields())))
		for i, f := range t.Fields() {
			dst = appendType(append(dst, byte(t.TypeCodes()[i])), f.Type)
		}
		return dst
	case *arrow.DictionaryType:
		return appendType(dst, t.ValueType)
	case *arrow.RunEndEncodedType:
		return appendType(dst, t.Encoded())
	case arrow.ExtensionType:
		return appendType(dst, t.StorageType())
	}
	// Fixed width: the type (its Arrow id), its width in bits and what
	// changes the meaning of its bytes.
	dst = append(dst, 'W', byte(dt.ID()))
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		dst = binary.AppendUvarint(dst, uint64(fw.BitWidth()))
	}
	switch t := dt.(type) {
	case *arrow.TimestampType:
		zoned := byte(0) // with a zone: an instant (Iceberg's timestamptz)
		if t.TimeZone != "" {
			zoned = 1
		}
		return append(dst, byte(t.Unit), zoned)
	case *arrow.Time32Type:
		return append(dst, byte(t.Unit))
	case *arrow.Time64Type:
		return append(dst, byte(t.Unit))
	case *arrow.DurationType:
		return append(dst, byte(t.Unit))
	case arrow.DecimalType:
		return binary.AppendVarint(dst, int64(t.GetScale()))
	}
	return dst
}
