package partition

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// transformKind is a partition transform without its parameter.
type transformKind uint8

const (
	transformIdentity transformKind = iota + 1
	transformBucket
	transformTruncate
	transformYear
	transformMonth
	transformDay
	transformHour
	transformVoid
)

// field is one partition field compiled against the schema.
type field struct {
	name     string        // partition field name
	id       int           // partition field id
	sourceID int           // source column field id; 0 for a void field without source
	source   string        // source column name, dotted; "" when none
	srcType  iceberg.Type  // source column type; nil when none
	tk       transformKind // the transform
	width    int           // bucket count or truncate width
	vt       valueType     // type of the partition value (unused for void)
	result   iceberg.Type  // Iceberg type of the partition value; nil for void
	apply    func(any) any // the transform on a source value in iceberg-go's Go form
}

func compileField(pf iceberg.PartitionField, sch *iceberg.Schema) (field, error) {
	f := field{name: pf.Name, id: pf.FieldID, sourceID: pf.SourceID()}
	if len(pf.SourceIDs) > 1 {
		return f, errors.New("transforms of several source columns are not supported")
	}
	tk, width, err := transformOf(pf.Transform)
	if err != nil {
		return f, err
	}
	f.tk, f.width = tk, width
	srcType, found := sch.FindTypeByID(f.sourceID)
	if !found {
		if tk == transformVoid {
			f.apply = func(any) any { return nil }

			return f, nil
		}

		return f, fmt.Errorf("source column id %d not in schema", f.sourceID)
	}
	f.srcType = srcType
	f.source, _ = sch.FindColumnName(f.sourceID)
	if !pf.Transform.CanTransform(srcType) {
		return f, fmt.Errorf("transform %s cannot apply to %s", pf.Transform, srcType)
	}
	if err := f.bind(); err != nil {
		return f, err
	}
	if tk != transformVoid {
		f.result = pf.Transform.ResultType(srcType)
	}

	return f, nil
}

func transformOf(t iceberg.Transform) (transformKind, int, error) {
	switch t := t.(type) {
	case iceberg.IdentityTransform, *iceberg.IdentityTransform:
		return transformIdentity, 0, nil
	case iceberg.VoidTransform, *iceberg.VoidTransform:
		return transformVoid, 0, nil
	case iceberg.YearTransform, *iceberg.YearTransform:
		return transformYear, 0, nil
	case iceberg.MonthTransform, *iceberg.MonthTransform:
		return transformMonth, 0, nil
	case iceberg.DayTransform, *iceberg.DayTransform:
		return transformDay, 0, nil
	case iceberg.HourTransform, *iceberg.HourTransform:
		return transformHour, 0, nil
	case iceberg.BucketTransform:
		return transformBucket, t.NumBuckets, nil
	case *iceberg.BucketTransform:
		return transformBucket, t.NumBuckets, nil
	case iceberg.TruncateTransform:
		return transformTruncate, t.Width, nil
	case *iceberg.TruncateTransform:
		return transformTruncate, t.Width, nil
	}

	return 0, 0, fmt.Errorf("transform %v is not supported", t)
}

// bind sets vt and apply from the transform and source type. apply mirrors
// what iceberg-go's writer does to compute a row's partition value.
func (f *field) bind() error {
	srcVT, ok := valueTypeOf(f.srcType)
	if !ok && f.tk != transformVoid {
		return fmt.Errorf("source type %s is not supported", f.srcType)
	}
	timeFn := func(t iceberg.TimeTransform, vt kind) error {
		fn, err := t.Transformer(f.srcType)
		if err != nil {
			return err
		}
		f.vt = valueType{kind: vt}
		f.apply = func(v any) any {
			r := fn(v)
			switch {
			case !r.Valid:
				return nil
			case vt == kindDate:
				return iceberg.Date(r.Val)
			}

			return r.Val
		}

		return nil
	}
	switch f.tk {
	case transformIdentity:
		f.vt, f.apply = srcVT, func(v any) any { return v }
	case transformVoid:
		f.vt, f.apply = srcVT, func(any) any { return nil }
	case transformBucket:
		fn := iceberg.BucketTransform{NumBuckets: f.width}.Transformer(f.srcType)
		f.vt = valueType{kind: kindInt}
		f.apply = func(v any) any {
			if r := fn(v); r.Valid {
				return r.Val
			}

			return nil
		}
	case transformTruncate:
		fn, err := iceberg.TruncateTransform{Width: f.width}.Transformer(f.srcType)
		if err != nil {
			return err
		}
		f.vt, f.apply = srcVT, fn
	case transformYear:
		return timeFn(iceberg.YearTransform{}, kindYear)
	case transformMonth:
		return timeFn(iceberg.MonthTransform{}, kindMonth)
	case transformDay:
		return timeFn(iceberg.DayTransform{}, kindDate)
	case transformHour:
		return timeFn(iceberg.HourTransform{}, kindHour)
	}

	return nil
}

// parse parses the raw (escaped) text of this field's value; nil is null.
func (f *field) parse(raw string) (any, error) {
	if raw == "null" {
		return nil, nil
	}
	if f.tk == transformVoid {
		return nil, fmt.Errorf("void value must be null, got %q", raw)
	}
	if strings.IndexByte(raw, '=') >= 0 {
		return nil, fmt.Errorf("unescaped \"=\" in value %q", raw)
	}
	s, err := unescape(raw)
	if err != nil {
		return nil, fmt.Errorf("bad escape in value %q", raw)
	}
	if s == "" && f.vt.kind != kindString && f.vt.kind != kindBinary {
		return nil, errors.New("missing value")
	}
	vt := f.vt
	if f.tk == transformTruncate && vt.kind == kindDecimal {
		// Truncating a negative value can add a digit: truncate[100] of
		// decimal(9,2) -9999999.99 is -10000000.00. Java and iceberg-go
		// keep such a result; truncated checks its range.
		vt.prec = maxDecimalDigits
	}
	v, err := parseValue(vt, s)
	if err != nil {
		return nil, err
	}
	switch f.tk {
	case transformBucket:
		if n := v.(int32); n < 0 || int(n) >= f.width {
			return nil, fmt.Errorf("bucket %d out of range [0,%d)", n, f.width)
		}
	case transformTruncate:
		if !f.truncated(v) {
			return nil, fmt.Errorf("%s %q is not truncated to width %d", f.vt.kind, s, f.width)
		}
	}

	return v, nil
}

// truncated reports whether v is the truncation to f.width of some value
// of the source type. That is v itself when v is a multiple of the width,
// with two exceptions that follow the spec's formula as Java and iceberg-go
// compute it: an int or long truncation of a value near the minimum
// overflows and wraps (truncate[10] of int -2147483648 is 2147483646), and
// a decimal truncation of a value near -10^P has P+1 digits.
func (f *field) truncated(v any) bool {
	w := int64(f.width)
	switch v := v.(type) {
	case int32:
		return int64(v)%w == 0 || v == f.apply(int32(math.MinInt32))
	case int64:
		return v%w == 0 || v == f.apply(int64(math.MinInt64))
	case string:
		return utf8.RuneCountInString(v) <= f.width
	case []byte:
		return len(v) <= f.width
	case iceberg.Decimal:
		u := v.Val.BigInt()
		if new(big.Int).Rem(u, big.NewInt(w)).Sign() != 0 {
			return false
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(f.vt.prec)), nil) // 10^P
		if u.CmpAbs(limit) < 0 {
			return true
		}
		// The least truncation: that of the least value, -(10^P - 1).
		least := f.apply(iceberg.Decimal{Val: decimal128.FromBigInt(limit.Sub(big.NewInt(1), limit)), Scale: f.vt.scale}).(iceberg.Decimal)
		return u.Sign() < 0 && u.Cmp(least.Val.BigInt()) >= 0
	}

	return false
}

// text is "name=value", escaped.
func (f *field) text(v any) string {
	return escape(f.name) + "=" + valueText(f.vt, v)
}
