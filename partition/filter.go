package partition

import (
	"math"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// Filter returns an expression over the source columns that selects every
// row of k, and maybe more: it is meant for scan pruning. Each field gives
// EqualTo (IsNaN, IsNull) for identity, a half-open range of the source
// column for year, month, day and hour, a range for truncate on numbers and
// StartsWith on strings, IsNull for a null value, and AlwaysTrue for bucket
// and void; the fields are joined with AND. For the zero Key or a key of
// another spec Filter returns AlwaysTrue, which selects a superset of any key.
func (s *Spec) Filter(k Key) iceberg.BooleanExpression {
	if s.check(k) != nil {
		return iceberg.AlwaysTrue{}
	}
	vals, err := s.parse(k.text)
	if err != nil {
		return iceberg.AlwaysTrue{}
	}
	var out iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	for i := range s.fields {
		out = iceberg.NewAnd(out, s.fields[i].filter(vals[i]))
	}

	return out
}

func (f *field) filter(v any) iceberg.BooleanExpression {
	if f.tk == transformVoid || f.source == "" {
		return iceberg.AlwaysTrue{}
	}
	ref := iceberg.Reference(f.source)
	if v == nil {
		return iceberg.IsNull(ref)
	}
	switch f.tk {
	case transformIdentity:
		return equalTo(ref, v)
	case transformTruncate:
		return f.truncateFilter(ref, v)
	case transformYear, transformMonth, transformDay, transformHour:
		lo, hi, ok := f.sourceRange(v)
		if !ok {
			return iceberg.AlwaysTrue{}
		}

		return betweenTyped(ref, f.srcType, lo, hi)
	}

	return iceberg.AlwaysTrue{}
}

func equalTo(ref iceberg.UnboundTerm, v any) iceberg.BooleanExpression {
	switch v := v.(type) {
	case bool:
		return iceberg.EqualTo(ref, v)
	case int32:
		return iceberg.EqualTo(ref, v)
	case int64:
		return iceberg.EqualTo(ref, v)
	case float32:
		if math.IsNaN(float64(v)) {
			return iceberg.IsNaN(ref)
		}

		return iceberg.EqualTo(ref, v)
	case float64:
		if math.IsNaN(v) {
			return iceberg.IsNaN(ref)
		}

		return iceberg.EqualTo(ref, v)
	case iceberg.Decimal:
		return iceberg.EqualTo(ref, v)
	case iceberg.Date:
		return iceberg.EqualTo(ref, v)
	case iceberg.Time:
		return iceberg.EqualTo(ref, v)
	case iceberg.Timestamp:
		return iceberg.EqualTo(ref, v)
	case iceberg.TimestampNano:
		return iceberg.EqualTo(ref, v)
	case string:
		return iceberg.EqualTo(ref, v)
	case uuid.UUID:
		return iceberg.EqualTo(ref, v)
	case []byte:
		return iceberg.EqualTo(ref, v)
	}

	return iceberg.AlwaysTrue{}
}

// betweenTyped is lo <= ref < hi with literals of the source type's Go form.
func betweenTyped(ref iceberg.UnboundTerm, src iceberg.Type, lo, hi int64) iceberg.BooleanExpression {
	switch src.(type) {
	case iceberg.DateType:
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, iceberg.Date(lo)), iceberg.LessThan(ref, iceberg.Date(hi)))
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, iceberg.Timestamp(lo)), iceberg.LessThan(ref, iceberg.Timestamp(hi)))
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, iceberg.TimestampNano(lo)), iceberg.LessThan(ref, iceberg.TimestampNano(hi)))
	}

	return iceberg.AlwaysTrue{}
}

func (f *field) truncateFilter(ref iceberg.UnboundTerm, v any) iceberg.BooleanExpression {
	w := int64(f.width)
	switch v := v.(type) {
	case int32:
		lo, hi := f.truncateSpan(int64(v))
		if !hi.IsInt64() || hi.Int64() > math.MaxInt32 {
			return iceberg.GreaterThanEqual(ref, int32(lo.Int64()))
		}

		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, int32(lo.Int64())), iceberg.LessThan(ref, int32(hi.Int64())))
	case int64:
		lo, hi := f.truncateSpan(v)
		if !hi.IsInt64() {
			return iceberg.GreaterThanEqual(ref, lo.Int64())
		}

		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, lo.Int64()), iceberg.LessThan(ref, hi.Int64()))
	case iceberg.Decimal:
		hi := new(big.Int).Add(v.Val.BigInt(), big.NewInt(w))
		if len(new(big.Int).Abs(hi).String()) > f.vt.prec {
			return iceberg.GreaterThanEqual(ref, v)
		}
		hd := iceberg.Decimal{Val: decimal128.FromBigInt(hi), Scale: v.Scale}

		return iceberg.NewAnd(iceberg.GreaterThanEqual(ref, v), iceberg.LessThan(ref, hd))
	case string:
		return iceberg.StartsWith(ref, v)
	case []byte:
		return iceberg.GreaterThanEqual(ref, v)
	}

	return iceberg.AlwaysTrue{}
}
