package fingerprint

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// encoder appends the canonical bytes of row i of one array.
type encoder func(dst []byte, i int) []byte

// newEncoder returns the encoder of a's values; it handles every Arrow
// type.
func newEncoder(a arrow.Array) encoder {
	if a.Len() == 0 { // no row to encode; its buffers may be absent
		return func(dst []byte, _ int) []byte { return dst }
	}
	var value encoder
	switch a := a.(type) {
	case *array.Null:
		return func(dst []byte, _ int) []byte { return append(dst, 0) }
	case *array.Boolean:
		value = func(dst []byte, i int) []byte {
			if a.Value(i) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}
	case *array.String:
		value = varBytes(a.ValueBytes(), a.ValueOffsets())
	case *array.LargeString:
		value = varBytes(a.ValueBytes(), a.ValueOffsets())
	case *array.Binary:
		value = varBytes(a.ValueBytes(), a.ValueOffsets())
	case *array.LargeBinary:
		value = varBytes(a.ValueBytes(), a.ValueOffsets())
	case *array.StringView:
		value = func(dst []byte, i int) []byte { return appendString(dst, a.Value(i)) }
	case *array.BinaryView:
		value = func(dst []byte, i int) []byte { return appendBytes(dst, a.Value(i)) }
	case *array.Struct:
		fields := make([]encoder, a.NumField())
		for f := range fields {
			fields[f] = newEncoder(a.Field(f))
		}
		value = func(dst []byte, i int) []byte {
			for _, f := range fields {
				dst = f(dst, i)
			}
			return dst
		}
	case *array.FixedSizeList:
		elem := newEncoder(a.ListValues())
		value = func(dst []byte, i int) []byte { // the size is the type's: no count
			start, end := a.ValueOffsets(i)
			return elements(dst, elem, start, end)
		}
	case array.VarLenListLike: // list, large list, map, list views
		elem := newEncoder(a.ListValues())
		value = func(dst []byte, i int) []byte {
			start, end := a.ValueOffsets(i)
			return elements(binary.AppendUvarint(dst, uint64(end-start)), elem, start, end)
		}
	case *array.SparseUnion:
		children := unionChildren(a)
		value = func(dst []byte, i int) []byte {
			return children[a.ChildID(i)](append(dst, byte(a.TypeCode(i))), i)
		}
	case *array.DenseUnion:
		children := unionChildren(a)
		value = func(dst []byte, i int) []byte {
			return children[a.ChildID(i)](append(dst, byte(a.TypeCode(i))), int(a.ValueOffset(i)))
		}
	case *array.Dictionary:
		dict := newEncoder(a.Dictionary())
		return func(dst []byte, i int) []byte {
			if a.IsNull(i) {
				return append(dst, 0)
			}
			return dict(dst, a.GetValueIndex(i))
		}
	case *array.RunEndEncoded:
		values := newEncoder(a.Values())
		return func(dst []byte, i int) []byte { return values(dst, a.GetPhysicalIndex(i)) }
	case array.ExtensionArray:
		return newEncoder(a.Storage())
	default:
		value = fixedWidth(a)
	}
	if a.NullN() == 0 {
		return func(dst []byte, i int) []byte { return value(append(dst, 1), i) }
	}
	return func(dst []byte, i int) []byte {
		if a.IsNull(i) {
			return append(dst, 0)
		}
		return value(append(dst, 1), i)
	}
}

// fixedWidth encodes the values of a fixed-width array (numbers, decimals,
// temporal types, intervals, fixed-size binary) as their bytes.
func fixedWidth(a arrow.Array) encoder {
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 {
		// No Arrow type is left but future ones: fail loudly rather than
		// hash something that is not the value.
		panic(fmt.Sprintf("fingerprint: no canonical encoding for Arrow type %s", a.DataType()))
	}
	w := fw.BitWidth() / 8
	raw := fixedValues(a, w)
	return func(dst []byte, i int) []byte { return append(dst, raw[i*w:(i+1)*w]...) }
}

// varBytes encodes variable-width values straight from the array's data
// and offsets buffers, without a copy per value. data is the array's
// ValueBytes, which starts at its first value (offs[0]) when the array is
// a slice, while its offsets stay those of the whole buffer.
func varBytes[O int32 | int64](data []byte, offs []O) encoder {
	base := offs[0]
	return func(dst []byte, i int) []byte { return appendBytes(dst, data[offs[i]-base:offs[i+1]-base]) }
}

func appendBytes(dst, v []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

func appendString(dst []byte, v string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(v))), v...)
}

// elements appends the elements start to end of a list.
func elements(dst []byte, elem encoder, start, end int64) []byte {
	for j := start; j < end; j++ {
		dst = elem(dst, int(j))
	}
	return dst
}

func unionChildren(a array.Union) []encoder {
	children := make([]encoder, a.NumFields())
	for c := range children {
		children[c] = newEncoder(a.Field(c))
	}
	return children
}
