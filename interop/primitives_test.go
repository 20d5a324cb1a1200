//go:build interop

package interop

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// col is one column of the primitive table: its Iceberg and Arrow types
// and the values its rows cycle through (nil is null).
type col struct {
	name   string
	ice    iceberg.Type
	arrow  arrow.DataType
	values []any
}

var (
	day0  = time.Date(2026, 7, 14, 10, 0, 0, 0, time.UTC)
	long  = strings.Repeat("0123456789", 1024) // a 10 KB partition value
	nan32 = float32(math.NaN())
)

// primitiveCols has a column of every primitive type icerun writes on v1
// and v2 but time (timeCol) and timestamp_ns (v3 only), with the partition values that break
// writers: null, NaN, -0.0 and +0.0, "" and empty bytes, '/', '=', '%',
// ',', quotes, non-ASCII, a 10 KB string, extremes of every range.
var primitiveCols = []col{
	{"b", iceberg.PrimitiveTypes.Bool, arrow.FixedWidthTypes.Boolean, []any{true, false, nil}},
	{"i", iceberg.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int32, []any{int32(0), int32(-1), int32(math.MaxInt32), int32(math.MinInt32), int32(42), nil}},
	{"l", iceberg.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64, []any{int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64), int64(1234567890123), nil, int64(7)}},
	{"f", iceberg.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float32, []any{nan32, float32(math.Copysign(0, -1)), float32(0), float32(1.5), float32(-3.25), float32(math.Inf(1)), nil}},
	{"d", iceberg.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float64, []any{math.NaN(), math.Copysign(0, -1), 0.0, 1e300, -2.5, math.Inf(-1), nil, 0.1}},
	{"dec", iceberg.DecimalTypeOf(9, 2), &arrow.Decimal128Type{Precision: 9, Scale: 2}, []any{int64(0), int64(-150), int64(999999999), int64(1), nil}},
	{"dt", iceberg.PrimitiveTypes.Date, arrow.FixedWidthTypes.Date32, []any{day0, time.Unix(0, 0).UTC(), time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC), nil, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}},
	{"ts", iceberg.PrimitiveTypes.Timestamp, &arrow.TimestampType{Unit: arrow.Microsecond}, []any{day0, day0.Add(14*time.Hour - time.Microsecond), time.Unix(0, 0).UTC().Add(-time.Microsecond), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), nil, day0.AddDate(0, 1, 0), day0.AddDate(-1, 0, 0)}},
	{"tstz", iceberg.PrimitiveTypes.TimestampTz, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, []any{day0.Add(time.Hour), day0.Add(90 * time.Minute), time.Unix(0, 0).UTC(), nil, time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)}},
	{"s", iceberg.PrimitiveTypes.String, arrow.BinaryTypes.String, []any{"", "a/b=c%d,e", "ünï©ødé 日本", long, "null", `it's a \ "quote"`, nil, "k3"}},
	{"u", iceberg.PrimitiveTypes.UUID, extensions.NewUUIDType(), []any{uuid.MustParse("123e4567-e89b-12d3-a456-426614174000"), uuid.Nil, nil, uuid.MustParse("ffffffff-ffff-ffff-ffff-ffffffffffff")}},
	{"bin", iceberg.PrimitiveTypes.Binary, arrow.BinaryTypes.Binary, []any{[]byte{}, []byte{0, 0xff}, []byte("a/=,%"), nil, []byte("ü")}},
	{"fx", iceberg.FixedTypeOf(4), &arrow.FixedSizeBinaryType{ByteWidth: 4}, []any{[]byte{0, 0, 0, 0}, []byte{0xff, 0xff, 0xff, 0xff}, []byte("abcd"), nil}},
}

// timeCol is the time column, apart: Spark cannot read Iceberg time
// columns ("Spark does not support time fields"), so only PyIceberg reads
// it (TestTimeColumn).
var timeCol = col{"t", iceberg.PrimitiveTypes.Time, arrow.FixedWidthTypes.Time64us, []any{time.Duration(0), 24*time.Hour - time.Microsecond, 12*time.Hour + 30*time.Minute + time.Microsecond, nil}}

// primitiveRows is the number of rows of the primitive table: every
// column's values meet many of the others'.
const primitiveRows = 120

// primitiveSchema is the Iceberg schema of primitiveCols, ids from 1.
func primitiveSchema(cols []col) *iceberg.Schema {
	fields := make([]iceberg.NestedField, len(cols))
	for i, c := range cols {
		fields[i] = iceberg.NestedField{ID: i + 1, Name: c.name, Type: c.ice}
	}
	return iceberg.NewSchema(0, fields...)
}

// primitiveBatch builds n rows of cols, row r holding value r mod len of
// each column (offset shifts the cycle).
func primitiveBatch(cols []col, n, offset int) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arrow, Nullable: true}
	}
	return batch(fields, n, func(b *array.RecordBuilder, r int) {
		for i, c := range cols {
			appendValue(b.Field(i), c.values[(r+offset)%len(c.values)])
		}
	})
}

func appendValue(fb array.Builder, v any) {
	if v == nil {
		fb.AppendNull()
		return
	}
	switch b := fb.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int32Builder:
		b.Append(v.(int32))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float32Builder:
		b.Append(v.(float32))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v.(int64)))
	case *array.Date32Builder:
		b.Append(arrow.Date32FromTime(v.(time.Time)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(time.Duration).Microseconds()))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(time.Time).UnixMicro()))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *extensions.UUIDBuilder:
		b.Append(v.(uuid.UUID))
	case *array.BinaryBuilder:
		b.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		b.Append(v.([]byte))
	default:
		panic(fmt.Sprintf("no builder for %T", fb))
	}
}

// sparkLiteral is a Spark SQL literal of typed value v (not "null") for a
// column of type typ.
func sparkLiteral(typ iceberg.Type, v string) string {
	tag, body, _ := strings.Cut(v, ":")
	switch tag {
	case "b":
		return body
	case "i":
		if typ.Equals(iceberg.PrimitiveTypes.Int32) {
			return "CAST('" + body + "' AS INT)"
		}
		return "CAST('" + body + "' AS BIGINT)"
	case "f":
		f := floatOf(v)
		kind, bits := "DOUBLE", 64
		if typ.Equals(iceberg.PrimitiveTypes.Float32) {
			kind, bits = "FLOAT", 32
		}
		return fmt.Sprintf("CAST('%s' AS %s)", strconv.FormatFloat(f, 'g', -1, bits), kind)
	case "d":
		return fmt.Sprintf("CAST('%s' AS %s)", body, strings.ToUpper(typ.String()))
	case "date":
		n, _ := strconv.Atoi(body)
		return "DATE'" + time.Unix(int64(n)*86400, 0).UTC().Format("2006-01-02") + "'"
	case "time":
		n, _ := strconv.ParseInt(body, 10, 64)
		return "TIME'" + time.UnixMicro(n).UTC().Format("15:04:05.000000") + "'"
	case "ts":
		n, _ := strconv.ParseInt(body, 10, 64)
		s := time.UnixMicro(n).UTC().Format("2006-01-02 15:04:05.000000")
		if typ.Equals(iceberg.PrimitiveTypes.Timestamp) {
			return "TIMESTAMP_NTZ'" + s + "'"
		}
		return "TIMESTAMP'" + s + "+00:00'"
	case "s":
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(body) + "'"
	case "x":
		b, _ := base64.StdEncoding.DecodeString(body)
		return "X'" + hex.EncodeToString(b) + "'"
	}
	panic("no Spark literal for " + v)
}

// floatOf decodes a typed float.
func floatOf(v string) float64 {
	body := strings.TrimPrefix(v, "f:")
	if body == "NaN" {
		return math.NaN()
	}
	bits, _ := strconv.ParseUint(body, 16, 64)
	return math.Float64frombits(bits)
}
