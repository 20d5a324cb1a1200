package decode

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
	"github.com/hamba/avro/v2"
)

func logicalOf(w avro.Schema) avro.LogicalType {
	if ls, ok := w.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return ls.Logical().Type()
	}
	return ""
}

func compilePrimitive(w *avro.PrimitiveSchema, target arrow.Field) (decodeFn, error) {
	if fn, ok := compileConnect(w, target); ok {
		return fn, nil
	}
	lt := logicalOf(w)
	t := target.Type
	switch w.Type() {
	case avro.Boolean:
		if t.ID() == arrow.BOOL {
			return func(in *avroIn, b array.Builder) error { b.(*array.BooleanBuilder).Append(in.ReadBool()); return nil }, nil
		}
	case avro.Int:
		switch {
		case lt == avro.Date && t.ID() == arrow.DATE32:
			return func(in *avroIn, b array.Builder) error {
				b.(*array.Date32Builder).Append(arrow.Date32(in.ReadInt()))
				return nil
			}, nil
		case lt == avro.TimeMillis && t.ID() == arrow.TIME64:
			return func(in *avroIn, b array.Builder) error {
				b.(*array.Time64Builder).Append(arrow.Time64(convertUnit(int64(in.ReadInt()), arrow.Millisecond, t.(*arrow.Time64Type).Unit)))
				return nil
			}, nil
		case lt != "":
		default:
			return intInto(func(in *avroIn) int64 { return int64(in.ReadInt()) }, t, true)
		}
	case avro.Long:
		switch lt {
		case avro.TimestampMillis, avro.TimestampMicros, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			ts, ok := t.(*arrow.TimestampType)
			if !ok {
				break
			}
			from := arrow.Microsecond
			if lt == avro.TimestampMillis || lt == avro.LocalTimestampMillis {
				from = arrow.Millisecond
			}
			return func(in *avroIn, b array.Builder) error {
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(convertUnit(in.ReadLong(), from, ts.Unit)))
				return nil
			}, nil
		case avro.TimeMicros:
			if tt, ok := t.(*arrow.Time64Type); ok {
				return func(in *avroIn, b array.Builder) error {
					b.(*array.Time64Builder).Append(arrow.Time64(convertUnit(in.ReadLong(), arrow.Microsecond, tt.Unit)))
					return nil
				}, nil
			}
		case "":
			return intInto(func(in *avroIn) int64 { return in.ReadLong() }, t, false)
		}
	case avro.Float:
		switch t.ID() {
		case arrow.FLOAT32:
			return func(in *avroIn, b array.Builder) error { b.(*array.Float32Builder).Append(in.ReadFloat()); return nil }, nil
		case arrow.FLOAT64:
			return func(in *avroIn, b array.Builder) error {
				b.(*array.Float64Builder).Append(float64(in.ReadFloat()))
				return nil
			}, nil
		}
	case avro.Double:
		if t.ID() == arrow.FLOAT64 {
			return func(in *avroIn, b array.Builder) error { b.(*array.Float64Builder).Append(in.ReadDouble()); return nil }, nil
		}
	case avro.String:
		switch {
		case t.ID() == arrow.STRING:
			return func(in *avroIn, b array.Builder) error { b.(*array.StringBuilder).Append(in.ReadString()); return nil }, nil
		case t.ID() == arrow.LARGE_STRING:
			return func(in *avroIn, b array.Builder) error {
				b.(*array.LargeStringBuilder).Append(in.ReadString())
				return nil
			}, nil
		case lt == avro.UUID && isUUID(t):
			return avroUUID(target), nil
		}
	case avro.Bytes:
		if lt == avro.Decimal {
			return decimalInto(w.Logical().(*avro.DecimalLogicalSchema), target, func(in *avroIn) []byte { return in.ReadBytes() })
		}
		if lt == "" {
			return bytesInto(func(in *avroIn) []byte { return in.ReadBytes() }, target)
		}
	}
	return nil, mismatch(w, target)
}

func compileFixed(w *avro.FixedSchema, target arrow.Field) (decodeFn, error) {
	size := w.Size()
	read := func(in *avroIn) []byte {
		buf := make([]byte, size)
		in.Read(buf)
		return buf
	}
	switch logicalOf(w) {
	case avro.Decimal:
		return decimalInto(w.Logical().(*avro.DecimalLogicalSchema), target, read)
	case avro.UUID:
		if isUUID(target.Type) && size == 16 {
			return func(in *avroIn, b array.Builder) error {
				var u [16]byte
				in.Read(u[:])
				b.(*extensions.UUIDBuilder).AppendBytes(u)
				return nil
			}, nil
		}
	}
	return bytesInto(read, target)
}

func isUUID(t arrow.DataType) bool {
	_, ok := t.(*extensions.UUIDType)
	return ok
}

// intInto stores an Avro int or long into an integer, floating-point or
// (long only) timestamp column, in the column's unit.
func intInto(read func(*avroIn) int64, t arrow.DataType, fromInt bool) (decodeFn, error) {
	switch t.ID() {
	case arrow.INT32:
		if fromInt {
			return func(in *avroIn, b array.Builder) error { b.(*array.Int32Builder).Append(int32(read(in))); return nil }, nil
		}
	case arrow.INT64:
		return func(in *avroIn, b array.Builder) error { b.(*array.Int64Builder).Append(read(in)); return nil }, nil
	case arrow.FLOAT32:
		if fromInt {
			return func(in *avroIn, b array.Builder) error {
				b.(*array.Float32Builder).Append(float32(read(in)))
				return nil
			}, nil
		}
	case arrow.FLOAT64:
		return func(in *avroIn, b array.Builder) error {
			b.(*array.Float64Builder).Append(float64(read(in)))
			return nil
		}, nil
	case arrow.TIMESTAMP:
		if !fromInt {
			return func(in *avroIn, b array.Builder) error {
				b.(*array.TimestampBuilder).Append(arrow.Timestamp(read(in)))
				return nil
			}, nil
		}
	}
	return nil, fmt.Errorf("Avro %s does not fit the column type %s", map[bool]string{true: "int", false: "long"}[fromInt], t)
}

func bytesInto(read func(*avroIn) []byte, target arrow.Field) (decodeFn, error) {
	switch t := target.Type.(type) {
	case *arrow.BinaryType:
		return func(in *avroIn, b array.Builder) error { b.(*array.BinaryBuilder).Append(read(in)); return nil }, nil
	case *arrow.LargeBinaryType:
		return func(in *avroIn, b array.Builder) error { b.(*array.BinaryBuilder).Append(read(in)); return nil }, nil
	case *arrow.FixedSizeBinaryType:
		return func(in *avroIn, b array.Builder) error {
			v := read(in)
			if len(v) != t.ByteWidth {
				return fmt.Errorf("field %q: %d bytes for fixed[%d]", target.Name, len(v), t.ByteWidth)
			}
			b.(*array.FixedSizeBinaryBuilder).Append(v)
			return nil
		}, nil
	}
	return nil, fmt.Errorf("field %q: Avro bytes do not fit the column type %s", target.Name, target.Type)
}

// decimalInto stores an Avro decimal (big-endian two's complement) into a
// decimal column of the same scale and a precision at least the writer's.
func decimalInto(d *avro.DecimalLogicalSchema, target arrow.Field, read func(*avroIn) []byte) (decodeFn, error) {
	dt, ok := target.Type.(*arrow.Decimal128Type)
	if !ok || int(dt.Scale) != d.Scale() || int(dt.Precision) < d.Precision() {
		return nil, fmt.Errorf("field %q: Avro decimal(%d,%d) does not fit the column type %s", target.Name, d.Precision(), d.Scale(), target.Type)
	}
	return func(in *avroIn, b array.Builder) error {
		v := read(in)
		if len(v) > 16 {
			return fmt.Errorf("field %q: a decimal of %d bytes", target.Name, len(v))
		}
		var buf [16]byte
		if len(v) > 0 && v[0]&0x80 != 0 {
			for i := range buf {
				buf[i] = 0xff
			}
		}
		copy(buf[16-len(v):], v)
		hi := int64(uint64(buf[0])<<56 | uint64(buf[1])<<48 | uint64(buf[2])<<40 | uint64(buf[3])<<32 | uint64(buf[4])<<24 | uint64(buf[5])<<16 | uint64(buf[6])<<8 | uint64(buf[7]))
		var lo uint64
		for _, c := range buf[8:] {
			lo = lo<<8 | uint64(c)
		}
		n := decimal128.New(hi, lo)
		if !n.FitsInPrecision(dt.Precision) {
			return fmt.Errorf("field %q: the decimal does not fit precision %d", target.Name, dt.Precision)
		}
		b.(*array.Decimal128Builder).Append(n)
		return nil
	}, nil
}

// convertUnit converts v from one time unit to another, flooring.
func convertUnit(v int64, from, to arrow.TimeUnit) int64 {
	mult := []int64{1, 1_000, 1_000_000, 1_000_000_000} // by arrow.TimeUnit, per second
	f, t := mult[from], mult[to]
	switch {
	case t > f:
		return v * (t / f)
	case t < f:
		q := f / t
		r := v / q
		if v%q < 0 {
			r--
		}
		return r
	}
	return v
}

// avroUUID reads an Avro string holding a UUID into target's UUID column.
func avroUUID(target arrow.Field) decodeFn {
	return func(in *avroIn, b array.Builder) error {
		s := in.ReadString()
		u, err := uuid.Parse(s)
		if err != nil {
			return fmt.Errorf("field %q: %q is not a UUID", target.Name, s)
		}
		b.(*extensions.UUIDBuilder).Append(u)
		return nil
	}
}
