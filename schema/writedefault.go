package schema

import (
	"encoding/hex"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// writeDefault is the value Apply writes into table column t when the
// input does not supply it: t's write-default (format version 3) as an
// Arrow scalar of the output type out, or nil when t has none or is not
// a primitive (a struct's default is null, its fields have their own).
//
// The write-default is held as iceberg-go keeps it: the Go value of a
// literal right after a schema change, or its JSON form ("std", 3, 1.5,
// true, "2026-07-14", "14.20", hex for binary) once the metadata was read
// back. Both are converted to t's type with iceberg-go's literal casts.
func writeDefault(t iceberg.NestedField, out arrow.DataType) (scalar.Scalar, error) {
	if t.WriteDefault == nil {
		return nil, nil
	}
	typ, ok := t.Type.(iceberg.PrimitiveType)
	if !ok {
		return nil, nil
	}
	lit, err := defaultLiteral(t.WriteDefault, typ)
	if err == nil {
		lit, err = lit.To(typ)
	}
	if err != nil {
		return nil, fmt.Errorf("write-default %v (%T) of %s: %w", t.WriteDefault, t.WriteDefault, typ, err)
	}
	return literalScalar(lit, out)
}

// defaultLiteral is the iceberg literal of a write-default value v, in
// either of its forms, before the cast to its column type typ.
func defaultLiteral(v any, typ iceberg.Type) (iceberg.Literal, error) {
	switch v := v.(type) {
	case iceberg.Literal:
		return v, nil
	case string:
		switch typ.(type) {
		case iceberg.BinaryType, iceberg.FixedType:
			b, err := hex.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("binary default is not hex: %w", err)
			}
			return iceberg.NewLiteral(b), nil
		}
		return iceberg.NewLiteral(v), nil
	case float64: // a JSON number
		switch typ.(type) {
		case iceberg.Float32Type, iceberg.Float64Type, iceberg.DecimalType:
			return iceberg.NewLiteral(v), nil
		}
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, fmt.Errorf("number %v is not an integer", v)
		}
		return iceberg.NewLiteral(int64(v)), nil
	case int:
		return iceberg.NewLiteral(int64(v)), nil
	case bool:
		return iceberg.NewLiteral(v), nil
	case int32:
		return iceberg.NewLiteral(v), nil
	case int64:
		return iceberg.NewLiteral(v), nil
	case float32:
		return iceberg.NewLiteral(v), nil
	case iceberg.Date:
		return iceberg.NewLiteral(v), nil
	case iceberg.Time:
		return iceberg.NewLiteral(v), nil
	case iceberg.Timestamp:
		return iceberg.NewLiteral(v), nil
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(v), nil
	case iceberg.Decimal:
		return iceberg.NewLiteral(v), nil
	case uuid.UUID:
		return iceberg.NewLiteral(v), nil
	case []byte:
		return iceberg.NewLiteral(v), nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// literalScalar is lit as an Arrow scalar of type out.
func literalScalar(lit iceberg.Literal, out arrow.DataType) (scalar.Scalar, error) {
	var sc scalar.Scalar
	switch l := lit.(type) {
	case iceberg.BoolLiteral:
		sc = scalar.NewBooleanScalar(bool(l))
	case iceberg.Int32Literal:
		sc = scalar.NewInt32Scalar(int32(l))
	case iceberg.Int64Literal:
		sc = scalar.NewInt64Scalar(int64(l))
	case iceberg.Float32Literal:
		sc = scalar.NewFloat32Scalar(float32(l))
	case iceberg.Float64Literal:
		sc = scalar.NewFloat64Scalar(float64(l))
	case iceberg.StringLiteral:
		sc = scalar.NewStringScalar(string(l))
	case iceberg.DateLiteral:
		sc = scalar.NewDate32Scalar(arrow.Date32(l))
	case iceberg.TimeLiteral:
		sc = scalar.NewTime64Scalar(arrow.Time64(l), out)
	case iceberg.TimestampLiteral:
		sc = scalar.NewTimestampScalar(arrow.Timestamp(l), out)
	case iceberg.TimestampNsLiteral:
		sc = scalar.NewTimestampScalar(arrow.Timestamp(l), out)
	case iceberg.DecimalLiteral:
		sc = scalar.NewDecimal128Scalar(l.Val, out)
	case iceberg.BinaryLiteral:
		sc = scalar.NewBinaryScalar(memory.NewBufferBytes([]byte(l)), out)
	case iceberg.FixedLiteral:
		sc = scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes([]byte(l)), out)
	case iceberg.UUIDLiteral:
		u := uuid.UUID(l)
		storage := scalar.NewFixedSizeBinaryScalar(memory.NewBufferBytes(u[:]), &arrow.FixedSizeBinaryType{ByteWidth: 16})
		sc = scalar.NewExtensionScalar(storage, out)
	default:
		return nil, fmt.Errorf("write-default literal %s (%T) is not supported", lit, lit)
	}
	if !arrow.TypeEqual(sc.DataType(), out) {
		return nil, fmt.Errorf("write-default %s is Arrow %s, the column is %s", lit, sc.DataType(), out)
	}
	return sc, nil
}
