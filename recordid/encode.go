package recordid

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

var (
	// ErrNoColumn is returned when a chosen column is not in the batch.
	ErrNoColumn = errors.New("recordid: no such column")
	// ErrUnsupportedType is returned for a chosen column of a type that
	// has no canonical encoding (struct, list, map, ...).
	ErrUnsupportedType = errors.New("recordid: unsupported column type")
)

// Type tags of the canonical encoding. A tag groups the Arrow types whose
// values are equal when their numbers are: every integer width, float and
// double, every timestamp unit.
const (
	tagNull   = 0
	tagInt    = 'i'
	tagUint   = 'u'
	tagFloat  = 'f'
	tagBool   = 'b'
	tagBytes  = 's'
	tagDate   = 'd'
	tagTime   = 't'
	tagTS     = 'T'
	tagDec128 = 'D'
)

// Encoder writes the canonical bytes of chosen columns of a row. Bind it
// to each batch, then call [Encoder.Append] per row. An Encoder is not
// safe for concurrent use; it holds no Arrow memory beyond the bound batch,
// which the caller keeps alive.
type Encoder struct {
	names []string
	cols  []colEnc
}

type colEnc func(dst []byte, row int) []byte

// NewEncoder returns an Encoder of the named columns, in that order.
func NewEncoder(columns ...string) (*Encoder, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("%w: no columns chosen", ErrNoColumn)
	}
	return &Encoder{names: append([]string(nil), columns...)}, nil
}

// Columns returns the chosen column names.
func (e *Encoder) Columns() []string { return append([]string(nil), e.names...) }

// Bind prepares the encoder for the rows of rec. Columns are found by
// top-level name.
func (e *Encoder) Bind(rec arrow.RecordBatch) error {
	e.cols = e.cols[:0]
	sc := rec.Schema()
	for _, name := range e.names {
		idx := sc.FieldIndices(name)
		if len(idx) != 1 {
			return fmt.Errorf("%w: %q (%d matches in %s)", ErrNoColumn, name, len(idx), sc)
		}
		enc, err := encoderOf(rec.Column(idx[0]))
		if err != nil {
			return fmt.Errorf("column %q: %w", name, err)
		}
		e.cols = append(e.cols, enc)
	}
	return nil
}

// Append appends the canonical bytes of row of the bound batch to dst.
func (e *Encoder) Append(dst []byte, row int) []byte {
	for _, c := range e.cols {
		dst = c(dst, row)
	}
	return dst
}

func encoderOf(col arrow.Array) (colEnc, error) {
	nulls := func(f colEnc) colEnc {
		if col.NullN() == 0 {
			return f
		}
		return func(dst []byte, row int) []byte {
			if col.IsNull(row) {
				return append(dst, tagNull)
			}
			return f(dst, row)
		}
	}
	i64 := func(tag byte, v func(int) int64) colEnc {
		return nulls(func(dst []byte, row int) []byte {
			return binary.BigEndian.AppendUint64(append(dst, tag), uint64(v(row)))
		})
	}
	bytes := func(v func(int) []byte) colEnc {
		return nulls(func(dst []byte, row int) []byte {
			b := v(row)
			dst = binary.AppendUvarint(append(dst, tagBytes), uint64(len(b)))
			return append(dst, b...)
		})
	}
	strs := func(v func(int) string) colEnc {
		return nulls(func(dst []byte, row int) []byte {
			s := v(row)
			dst = binary.AppendUvarint(append(dst, tagBytes), uint64(len(s)))
			return append(dst, s...)
		})
	}
	switch a := col.(type) {
	case *array.Int8:
		return i64(tagInt, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Int16:
		return i64(tagInt, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Int32:
		return i64(tagInt, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Int64:
		return i64(tagInt, func(i int) int64 { return a.Value(i) }), nil
	case *array.Uint8:
		return i64(tagUint, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Uint16:
		return i64(tagUint, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Uint32:
		return i64(tagUint, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Uint64:
		return i64(tagUint, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Float32:
		return i64(tagFloat, func(i int) int64 { return floatBits(float64(a.Value(i))) }), nil
	case *array.Float64:
		return i64(tagFloat, func(i int) int64 { return floatBits(a.Value(i)) }), nil
	case *array.Boolean:
		return nulls(func(dst []byte, row int) []byte {
			if a.Value(row) {
				return append(dst, tagBool, 1)
			}
			return append(dst, tagBool, 0)
		}), nil
	case *array.String:
		return strs(a.Value), nil
	case *array.LargeString:
		return strs(a.Value), nil
	case *array.Binary:
		return bytes(a.Value), nil
	case *array.LargeBinary:
		return bytes(a.Value), nil
	case *array.FixedSizeBinary:
		return bytes(a.Value), nil
	case *array.Date32:
		return i64(tagDate, func(i int) int64 { return int64(a.Value(i)) }), nil
	case *array.Date64:
		return i64(tagDate, func(i int) int64 { return int64(a.Value(i)) / 86_400_000 }), nil
	case *array.Timestamp:
		mult := unitNanos(a.DataType().(*arrow.TimestampType).Unit)
		return i64(tagTS, func(i int) int64 { return int64(a.Value(i)) * mult }), nil
	case *array.Time32:
		mult := unitNanos(a.DataType().(*arrow.Time32Type).Unit)
		return i64(tagTime, func(i int) int64 { return int64(a.Value(i)) * mult }), nil
	case *array.Time64:
		mult := unitNanos(a.DataType().(*arrow.Time64Type).Unit)
		return i64(tagTime, func(i int) int64 { return int64(a.Value(i)) * mult }), nil
	case *array.Decimal128:
		scale := byte(a.DataType().(*arrow.Decimal128Type).Scale)
		return nulls(func(dst []byte, row int) []byte {
			v := a.Value(row)
			dst = append(dst, tagDec128, scale)
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits()))
			return binary.BigEndian.AppendUint64(dst, v.LowBits())
		}), nil
	case array.ExtensionArray: // e.g. the UUID extension: its storage
		return encoderOf(a.Storage())
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, col.DataType())
}

// floatBits makes -0 and +0 one value, and every NaN one value.
func floatBits(f float64) int64 {
	switch {
	case f == 0:
		return 0
	case math.IsNaN(f):
		return int64(0x7ff8000000000001)
	}
	return int64(math.Float64bits(f))
}

func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}
