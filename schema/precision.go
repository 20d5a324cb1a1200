package schema

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// precisionRule: a decimal value has at most its column's precision in
// digits. Arrow does not enforce the precision of a decimal128 array, and
// Parquet stores a decimal of precision 9 or less in 32 bits and of 18 or
// less in 64, so a wider value would be written as another number (and a
// partition transform of it may overflow 128 bits). Every valid value of
// a decimal column is compared with the column's bounds, -10^P and 10^P.
type precisionRule struct{}

func (precisionRule) applies(nd *node) bool { return nd.bounded }

func (precisionRule) first(nd *node, arr arrow.Array, lo, hi int, valid func(int) bool) (int, bool) {
	d, ok := arr.(*array.Decimal128)
	if !ok || nd.prec <= 0 || nd.prec > 38 || d.NullN() == d.Len() {
		return 0, false
	}
	limit := decimal128.GetScaleMultiplier(int(nd.prec)) // 10^P
	least := limit.Negate()
	vals := d.Values()
	for i := lo; i < hi; i++ {
		if v := vals[i]; (v.LessEqual(least) || v.GreaterEqual(limit)) && d.IsValid(i) && (valid == nil || valid(i)) {
			return i, true
		}
	}
	return 0, false
}

// decimalPrecision is the precision of out, a decimal128 output type; 0
// for other types.
func decimalPrecision(out arrow.DataType) int32 {
	if d, ok := out.(*arrow.Decimal128Type); ok {
		return d.Precision
	}
	return 0
}
