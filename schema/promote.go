package schema

import (
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
)

// utcAliases are the time zones iceberg-go reads as UTC (timestamptz).
var utcAliases = []string{"UTC", "+00:00", "Etc/UTC", "Z"}

var errNotPromotable = errors.New("not a lossless promotion")

// leaf returns how to build a primitive output array of type out, for table
// type t, from an input array of type in. It allows the Iceberg promotions
// (int to long, float to double, decimal precision up with the same scale),
// unsigned integers into the Iceberg types that hold them (uint8 and uint16
// into int, uint32 into long, uint64 into decimal(20+, 0)),
// the Arrow encodings iceberg-go writes for the same Iceberg type (small
// integers, large strings and binaries, fixed[16] for uuid) and the timestamp
// units iceberg-go's WriteRecords accepts (s, ms and us; ns of whole
// microseconds, see nanosToMicros).
// Anything else, narrowing included, is an error.
func leaf(in arrow.DataType, t iceberg.Type, out arrow.DataType) (op, error) {
	if arrow.TypeEqual(in, out) {
		return opSame, nil
	}

	switch t := t.(type) {
	case iceberg.Int32Type:
		switch in.ID() {
		case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16:
			return opCast, nil
		}
	case iceberg.Int64Type:
		switch in.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return opCast, nil
		}
	case iceberg.Float64Type:
		if in.ID() == arrow.FLOAT32 {
			return opCast, nil
		}
	case iceberg.DecimalType:
		if in.ID() == arrow.UINT64 && t.Scale() == 0 && t.Precision() >= 20 {
			return opCast, nil // every uint64 has at most 20 digits
		}
		return widerDecimal(in, t)
	case iceberg.TimestampType:
		return timestamp(in, false, arrow.Microsecond)
	case iceberg.TimestampTzType:
		return timestamp(in, true, arrow.Microsecond)
	case iceberg.TimestampNsType:
		return timestamp(in, false, arrow.Nanosecond)
	case iceberg.TimestampTzNsType:
		return timestamp(in, true, arrow.Nanosecond)
	case iceberg.StringType:
		if in.ID() == arrow.LARGE_STRING {
			return opCast, nil
		}
	case iceberg.BinaryType:
		if in.ID() == arrow.LARGE_BINARY {
			return opCast, nil
		}
	case iceberg.UUIDType:
		if fb, ok := in.(*arrow.FixedSizeBinaryType); ok && fb.ByteWidth == 16 {
			return opWrap, nil
		}
	}
	return 0, errNotPromotable
}

func widerDecimal(in arrow.DataType, t iceberg.DecimalType) (op, error) {
	d, ok := in.(arrow.DecimalType)
	if !ok || int(d.GetScale()) != t.Scale() || int(d.GetPrecision()) > t.Precision() {
		return 0, errNotPromotable
	}
	switch in.ID() {
	case arrow.DECIMAL128:
		return opRetype, nil // same 16-byte values, wider precision
	case arrow.DECIMAL32, arrow.DECIMAL64:
		return opWidenDecimal, nil
	}
	return 0, errNotPromotable
}

// timestamp accepts input timestamps of the table's zone class (UTC-adjusted
// or local) in a unit no finer than the table's, and nanoseconds for a
// microsecond table when their values are whole microseconds (Apply
// checks each).
func timestamp(in arrow.DataType, utc bool, unit arrow.TimeUnit) (op, error) {
	ts, ok := in.(*arrow.TimestampType)
	if !ok {
		return 0, errNotPromotable
	}
	if utc != slices.Contains(utcAliases, ts.TimeZone) || !utc && ts.TimeZone != "" {
		return 0, errNotPromotable
	}
	switch {
	case ts.Unit == unit:
		return opRetype, nil // only the zone spelling differs
	case ts.Unit < unit && unit == arrow.Microsecond:
		return opCast, nil
	case ts.Unit == arrow.Nanosecond && unit == arrow.Microsecond:
		return opNanosToMicros, nil
	}
	return 0, errNotPromotable
}
