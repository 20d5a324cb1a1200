package partition

import (
	"fmt"
	"math"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// convertValue converts a partition value as iceberg-go hands it out (after
// writing with table.WriteRecords, or read back from a manifest) to the Go
// form of kind vt.kind. Range is not checked here: the caller formats the
// result and parses it back.
func convertValue(vt valueType, v any) (any, error) {
	if lit, ok := v.(iceberg.Literal); ok {
		v = lit.Any()
	}
	var (
		out any
		ok  bool
	)
	switch vt.kind {
	case kindBool:
		out, ok = v.(bool)
	case kindInt, kindYear, kindMonth, kindHour:
		var n int64
		if n, ok = asInt(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			out = int32(n)
		} else {
			ok = false
		}
	case kindLong:
		out, ok = asInt(v)
	case kindFloat:
		out, ok = asFloat32(v)
	case kindDouble:
		switch f := v.(type) {
		case float64:
			out, ok = f, true
		case float32:
			out, ok = float64(f), true
		}
	case kindDecimal:
		var d iceberg.Decimal
		if d, ok = v.(iceberg.Decimal); ok && d.Scale != vt.scale {
			return nil, fmt.Errorf("decimal %s has scale %d, want %d", d, d.Scale, vt.scale)
		}
		out = d
	case kindDate:
		out, ok = asDate(v)
	case kindTime:
		out, ok = asTime(v)
	case kindTimestamp, kindTimestampTz:
		out, ok = asTimestamp(v)
	case kindTimestampNs, kindTimestampTzNs:
		out, ok = asTimestampNano(v)
	case kindString:
		out, ok = asString(v)
	case kindUUID:
		out, ok = asUUID(v)
	case kindFixed, kindBinary:
		out, ok = asBytes(v)
	}
	if !ok {
		return nil, fmt.Errorf("cannot use %T %v as %s", v, v, vt.kind)
	}

	return out, nil
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case uint:
		return int64(n), uint64(n) <= math.MaxInt64
	}

	return 0, false
}

func asFloat32(v any) (float32, bool) {
	switch f := v.(type) {
	case float32:
		return f, true
	case float64:
		g := float32(f)

		return g, float64(g) == f || math.IsNaN(f)
	}

	return 0, false
}

func asDate(v any) (iceberg.Date, bool) {
	switch d := v.(type) {
	case iceberg.Date:
		return d, true
	case time.Time:
		s := d.Unix()
		if d.Nanosecond() != 0 || s%86400 != 0 {
			return 0, false
		}

		return iceberg.Date(s / 86400), true
	}
	n, ok := asInt(v)

	return iceberg.Date(n), ok && n >= math.MinInt32 && n <= math.MaxInt32
}

func asTime(v any) (iceberg.Time, bool) {
	switch t := v.(type) {
	case iceberg.Time:
		return t, true
	case time.Duration:
		return iceberg.Time(t.Microseconds()), t%time.Microsecond == 0
	}
	n, ok := asInt(v)

	return iceberg.Time(n), ok
}

func asTimestamp(v any) (iceberg.Timestamp, bool) {
	switch t := v.(type) {
	case iceberg.Timestamp:
		return t, true
	case time.Time:
		return iceberg.Timestamp(t.UnixMicro()), t.Nanosecond()%1000 == 0
	}
	n, ok := asInt(v)

	return iceberg.Timestamp(n), ok
}

func asTimestampNano(v any) (iceberg.TimestampNano, bool) {
	switch t := v.(type) {
	case iceberg.TimestampNano:
		return t, true
	case time.Time:
		ns := t.UnixNano()

		return iceberg.TimestampNano(ns), time.Unix(0, ns).Equal(t)
	}
	n, ok := asInt(v)

	return iceberg.TimestampNano(n), ok
}

func asString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), utf8.Valid(s)
	}

	return "", false
}

func asUUID(v any) (uuid.UUID, bool) {
	switch u := v.(type) {
	case uuid.UUID:
		return u, true
	case [16]byte:
		return uuid.UUID(u), true
	case []byte:
		if len(u) == 16 {
			return uuid.UUID(u), true
		}
	case string:
		parsed, err := uuid.Parse(u)

		return parsed, err == nil
	}

	return uuid.UUID{}, false
}

// asBytes accepts []byte, string and byte arrays ([N]byte, as Avro fixed
// values may decode to). The result is a copy.
func asBytes(v any) ([]byte, bool) {
	switch b := v.(type) {
	case []byte:
		return append([]byte{}, b...), true
	case string:
		return []byte(b), true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		out := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(out), rv)

		return out, true
	}

	return nil, false
}
