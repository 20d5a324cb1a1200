package partition

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// kind is the type of a partition value, which decides its text and Go form.
type kind uint8

const (
	kindBool          kind = iota + 1 // bool
	kindInt                           // int32
	kindLong                          // int64
	kindFloat                         // float32
	kindDouble                        // float64
	kindDecimal                       // iceberg.Decimal
	kindDate                          // iceberg.Date
	kindTime                          // iceberg.Time
	kindTimestamp                     // iceberg.Timestamp
	kindTimestampTz                   // iceberg.Timestamp
	kindTimestampNs                   // iceberg.TimestampNano
	kindTimestampTzNs                 // iceberg.TimestampNano
	kindString                        // string
	kindUUID                          // uuid.UUID
	kindFixed                         // []byte
	kindBinary                        // []byte
	kindYear                          // int32, years since 1970
	kindMonth                         // int32, months since 1970-01
	kindHour                          // int32, hours since the epoch
)

var kindNames = [...]string{
	kindBool: "bool", kindInt: "int", kindLong: "long", kindFloat: "float",
	kindDouble: "double", kindDecimal: "decimal", kindDate: "date", kindTime: "time",
	kindTimestamp: "timestamp", kindTimestampTz: "timestamptz", kindTimestampNs: "timestamp_ns",
	kindTimestampTzNs: "timestamptz_ns", kindString: "string", kindUUID: "uuid",
	kindFixed: "fixed", kindBinary: "binary", kindYear: "year", kindMonth: "month", kindHour: "hour",
}

func (k kind) String() string { return kindNames[k] }

// valueType is a kind with its parameters.
type valueType struct {
	kind        kind
	prec, scale int // decimal
	length      int // fixed
}

// valueTypeOf maps an Iceberg primitive type to the type of its values.
func valueTypeOf(t iceberg.Type) (valueType, bool) {
	switch t := t.(type) {
	case iceberg.BooleanType:
		return valueType{kind: kindBool}, true
	case iceberg.Int32Type:
		return valueType{kind: kindInt}, true
	case iceberg.Int64Type:
		return valueType{kind: kindLong}, true
	case iceberg.Float32Type:
		return valueType{kind: kindFloat}, true
	case iceberg.Float64Type:
		return valueType{kind: kindDouble}, true
	case iceberg.DecimalType:
		return valueType{kind: kindDecimal, prec: t.Precision(), scale: t.Scale()}, true
	case iceberg.DateType:
		return valueType{kind: kindDate}, true
	case iceberg.TimeType:
		return valueType{kind: kindTime}, true
	case iceberg.TimestampType:
		return valueType{kind: kindTimestamp}, true
	case iceberg.TimestampTzType:
		return valueType{kind: kindTimestampTz}, true
	case iceberg.TimestampNsType:
		return valueType{kind: kindTimestampNs}, true
	case iceberg.TimestampTzNsType:
		return valueType{kind: kindTimestampTzNs}, true
	case iceberg.StringType:
		return valueType{kind: kindString}, true
	case iceberg.UUIDType:
		return valueType{kind: kindUUID}, true
	case iceberg.FixedType:
		return valueType{kind: kindFixed, length: t.Len()}, true
	case iceberg.BinaryType:
		return valueType{kind: kindBinary}, true
	}

	return valueType{}, false
}

const tzSuffix = "+00:00"

// parseValue parses the (unescaped) text of a non-null value.
func parseValue(vt valueType, s string) (any, error) {
	bad := func() error { return fmt.Errorf("bad %s %q", vt.kind, s) }
	switch vt.kind {
	case kindBool:
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case kindInt:
		if n, err := strconv.ParseInt(s, 10, 32); err == nil {
			return int32(n), nil
		}
	case kindLong:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	case kindFloat:
		if f, err := strconv.ParseFloat(s, 32); err == nil {
			return float32(f), nil
		}
	case kindDouble:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
	case kindDecimal:
		if d, ok := parseDecimal(vt, s); ok {
			return d, nil
		}
	case kindDate:
		if d, ok := parseDate(s); ok {
			return iceberg.Date(d), nil
		}
	case kindTime:
		if t, ok := parseClock(s, 6); ok {
			return iceberg.Time(t), nil
		}
	case kindTimestamp:
		if t, ok := parseTimestamp(s, 6); ok {
			return iceberg.Timestamp(t), nil
		}
	case kindTimestampTz:
		if rest, ok := strings.CutSuffix(s, tzSuffix); ok {
			if t, ok := parseTimestamp(rest, 6); ok {
				return iceberg.Timestamp(t), nil
			}
		}
	case kindTimestampNs:
		if t, ok := parseTimestamp(s, 9); ok {
			return iceberg.TimestampNano(t), nil
		}
	case kindTimestampTzNs:
		if rest, ok := strings.CutSuffix(s, tzSuffix); ok {
			if t, ok := parseTimestamp(rest, 9); ok {
				return iceberg.TimestampNano(t), nil
			}
		}
	case kindString:
		if utf8.ValidString(s) {
			return s, nil
		}

		return nil, fmt.Errorf("bad string %q: invalid UTF-8", s)
	case kindUUID:
		if u, err := uuid.Parse(s); err == nil {
			return u, nil
		}
	case kindFixed, kindBinary:
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, bad()
		}
		if vt.kind == kindFixed && len(b) != vt.length {
			return nil, fmt.Errorf("bad fixed %q: %d bytes, want %d", s, len(b), vt.length)
		}

		return b, nil
	case kindYear:
		if y, ok := parseYear(s); ok {
			return int32(y), nil
		}
	case kindMonth:
		if m, ok := parseMonth(s); ok {
			return int32(m), nil
		}
	case kindHour:
		if h, ok := parseHour(s); ok && h >= math.MinInt32 && h <= math.MaxInt32 {
			return int32(h), nil
		}
	}

	return nil, bad()
}

// maxDecimalDigits is the largest decimal precision Iceberg allows.
const maxDecimalDigits = 38

// parseDecimal parses [-]digits[.S digits] with exactly vt.scale fraction digits.
func parseDecimal(vt valueType, s string) (iceberg.Decimal, bool) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	intPart, frac := body, ""
	if vt.scale > 0 {
		var ok bool
		if intPart, frac, ok = strings.Cut(body, "."); !ok || len(frac) != vt.scale {
			return iceberg.Decimal{}, false
		}
	}
	if _, ok := digits(intPart); !ok {
		return iceberg.Decimal{}, false
	}
	if _, ok := digits(frac); !ok && frac != "" {
		return iceberg.Decimal{}, false
	}
	all := strings.TrimLeft(intPart+frac, "0")
	if len(all) > vt.prec {
		return iceberg.Decimal{}, false
	}
	u, _ := new(big.Int).SetString("0"+all, 10)
	if neg {
		u.Neg(u)
	}

	return iceberg.Decimal{Val: decimal128.FromBigInt(u), Scale: vt.scale}, true
}

func formatDecimal(d iceberg.Decimal) string {
	u := d.Val.BigInt()
	sign := ""
	if u.Sign() < 0 {
		sign = "-"
		u.Neg(u)
	}
	s := u.String()
	if d.Scale <= 0 {
		return sign + s
	}
	if len(s) <= d.Scale {
		s = strings.Repeat("0", d.Scale-len(s)+1) + s
	}

	return sign + s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
}

// formatValue writes a non-null value of type vt (before escaping).
func formatValue(vt valueType, v any) string {
	switch vt.kind {
	case kindBool:
		return strconv.FormatBool(v.(bool))
	case kindInt:
		return strconv.FormatInt(int64(v.(int32)), 10)
	case kindLong:
		return strconv.FormatInt(v.(int64), 10)
	case kindFloat:
		return strconv.FormatFloat(float64(v.(float32)), 'g', -1, 32)
	case kindDouble:
		return strconv.FormatFloat(v.(float64), 'g', -1, 64)
	case kindDecimal:
		return formatDecimal(v.(iceberg.Decimal))
	case kindDate:
		return formatDate(int64(v.(iceberg.Date)))
	case kindTime:
		return formatClock(int64(v.(iceberg.Time)), 6)
	case kindTimestamp:
		return formatTimestamp(int64(v.(iceberg.Timestamp)), 6)
	case kindTimestampTz:
		return formatTimestamp(int64(v.(iceberg.Timestamp)), 6) + tzSuffix
	case kindTimestampNs:
		return formatTimestamp(int64(v.(iceberg.TimestampNano)), 9)
	case kindTimestampTzNs:
		return formatTimestamp(int64(v.(iceberg.TimestampNano)), 9) + tzSuffix
	case kindString:
		return v.(string)
	case kindUUID:
		return v.(uuid.UUID).String()
	case kindFixed, kindBinary:
		return hex.EncodeToString(v.([]byte))
	case kindYear:
		return formatYear(int64(v.(int32)))
	case kindMonth:
		return formatMonth(int64(v.(int32)))
	case kindHour:
		return formatHour(int64(v.(int32)))
	}
	panic(fmt.Sprintf("partition: unknown kind %d", vt.kind))
}

// valueText is the escaped text of a value, "null" for nil.
func valueText(vt valueType, v any) string {
	if v == nil {
		return "null"
	}
	s := escape(formatValue(vt, v))
	if s == "null" {
		return "%6Eull"
	}

	return s
}
