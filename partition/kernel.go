package partition

import (
	"bytes"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// A kernel tests the rows of one source column against one partition value.
type kernel interface {
	// next returns the first row >= from of col that is not in the key, or -1.
	next(col arrow.Array, n nulls, from int) int
}

// matchAll is a void field: every row is in the key.
type matchAll struct{}

func (matchAll) next(arrow.Array, nulls, int) int { return -1 }

// nullOnly is a null key value: only rows with a null source are in the key.
type nullOnly struct{}

func (nullOnly) next(col arrow.Array, n nulls, from int) int {
	for i := from; i < col.Len(); i++ {
		if !n.at(i) {
			return i
		}
	}

	return -1
}

// rangeKernel keeps rows whose raw integer value is in [lo, hi].
type rangeKernel[T ~int32 | ~int64] struct {
	lo, hi T
	empty  bool // no value is in the key
	values func(arrow.Array) []T
}

func (k *rangeKernel[T]) next(col arrow.Array, n nulls, from int) int {
	vals := k.values(col)
	if k.empty {
		if from < len(vals) {
			return from
		}

		return -1
	}
	lo, hi := k.lo, k.hi
	if n.any() {
		for i := from; i < len(vals); i++ {
			if v := vals[i]; v < lo || v > hi || n.at(i) {
				return i
			}
		}

		return -1
	}
	for i := from; i < len(vals); i++ {
		if v := vals[i]; v < lo || v > hi {
			return i
		}
	}

	return -1
}

// newRange makes a rangeKernel for [lo, hi) clipped to the bits-wide T.
func newRange[T ~int32 | ~int64](values func(arrow.Array) []T, bits int, lo, hi *big.Int) kernel {
	minV, maxV := int64(math.MinInt64), int64(math.MaxInt64)
	if bits == 32 {
		minV, maxV = math.MinInt32, math.MaxInt32
	}
	a, b, empty := clampClosed(lo, hi, minV, maxV)

	return &rangeKernel[T]{lo: T(a), hi: T(b), empty: empty, values: values}
}

// intRange returns the range kernel constructor for an integer-backed
// source type, or nil.
func intRange(src iceberg.Type) func(lo, hi *big.Int) kernel {
	switch src.(type) {
	case iceberg.Int32Type:
		return func(lo, hi *big.Int) kernel {
			return newRange(func(a arrow.Array) []int32 { return a.(*array.Int32).Int32Values() }, 32, lo, hi)
		}
	case iceberg.Int64Type:
		return func(lo, hi *big.Int) kernel {
			return newRange(func(a arrow.Array) []int64 { return a.(*array.Int64).Int64Values() }, 64, lo, hi)
		}
	case iceberg.DateType:
		return func(lo, hi *big.Int) kernel {
			return newRange(func(a arrow.Array) []arrow.Date32 { return a.(*array.Date32).Date32Values() }, 32, lo, hi)
		}
	case iceberg.TimeType:
		return func(lo, hi *big.Int) kernel {
			return newRange(func(a arrow.Array) []arrow.Time64 { return a.(*array.Time64).Time64Values() }, 64, lo, hi)
		}
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return func(lo, hi *big.Int) kernel {
			return newRange(func(a arrow.Array) []arrow.Timestamp { return a.(*array.Timestamp).TimestampValues() }, 64, lo, hi)
		}
	}

	return nil
}

// boolKernel keeps rows equal to v.
type boolKernel struct{ v bool }

func (k boolKernel) next(col arrow.Array, n nulls, from int) int {
	a := col.(*array.Boolean)
	for i := from; i < a.Len(); i++ {
		if n.at(i) || a.Value(i) != k.v {
			return i
		}
	}

	return -1
}

// floatKernel keeps rows equal to v, telling -0 from 0; NaN matches NaN.
type floatKernel[T float32 | float64] struct {
	v      T
	values func(arrow.Array) []T
}

func (k floatKernel[T]) next(col arrow.Array, n nulls, from int) int {
	vals := k.values(col)
	want, nan, neg := k.v, k.v != k.v, math.Signbit(float64(k.v))
	for i := from; i < len(vals); i++ {
		v := vals[i]
		in := v == want && math.Signbit(float64(v)) == neg
		if nan {
			in = v != v
		}
		if !in || n.at(i) {
			return i
		}
	}

	return -1
}

// stringKernel keeps rows whose string value satisfies match.
type stringKernel struct{ match func(string) bool }

func (k stringKernel) next(col arrow.Array, n nulls, from int) int {
	a := col.(interface{ Value(int) string })
	for i := from; i < col.Len(); i++ {
		if n.at(i) || !k.match(a.Value(i)) {
			return i
		}
	}

	return -1
}

// bytesKernel keeps rows whose bytes satisfy match.
type bytesKernel struct{ match func([]byte) bool }

func (k bytesKernel) next(col arrow.Array, n nulls, from int) int {
	if u, ok := col.(*extensions.UUIDArray); ok {
		col = u.Storage()
	}
	a := col.(interface{ Value(int) []byte })
	for i := from; i < col.Len(); i++ {
		if n.at(i) || !k.match(a.Value(i)) {
			return i
		}
	}

	return -1
}

// decimalKernel keeps rows with unscaled value in [lo, hi].
type decimalKernel struct{ lo, hi decimal128.Num }

func (k decimalKernel) next(col arrow.Array, n nulls, from int) int {
	vals := col.(*array.Decimal128).Values()
	for i := from; i < len(vals); i++ {
		if v := vals[i]; v.Less(k.lo) || v.Greater(k.hi) || n.at(i) {
			return i
		}
	}

	return -1
}

// funcKernel applies the field's transform to every row (bucket).
type funcKernel struct {
	f    *field
	want int32
}

func (k funcKernel) next(col arrow.Array, n nulls, from int) int {
	for i := from; i < col.Len(); i++ {
		got, ok := k.f.apply(sourceValue(col, n, i, k.f.srcType)).(int32)
		if !ok || got != k.want {
			return i
		}
	}

	return -1
}

// kernel builds the kernel testing rows of this field against value v.
func (f *field) kernel(v any) kernel {
	switch {
	case f.tk == transformVoid:
		return matchAll{}
	case v == nil:
		return nullOnly{}
	case f.tk == transformBucket:
		return funcKernel{f: f, want: v.(int32)}
	case f.tk == transformIdentity:
		return f.identityKernel(v)
	case f.tk == transformTruncate:
		return f.truncateKernel(v)
	}
	lo, hi := f.sourceSpan(v)

	return intRange(f.srcType)(lo, hi)
}

func (f *field) identityKernel(v any) kernel {
	if mk := intRange(f.srcType); mk != nil {
		lo := big.NewInt(intOf(v))

		return mk(lo, new(big.Int).Add(lo, big.NewInt(1)))
	}
	switch v := v.(type) {
	case bool:
		return boolKernel{v: v}
	case float32:
		return floatKernel[float32]{v: v, values: func(a arrow.Array) []float32 { return a.(*array.Float32).Float32Values() }}
	case float64:
		return floatKernel[float64]{v: v, values: func(a arrow.Array) []float64 { return a.(*array.Float64).Float64Values() }}
	case iceberg.Decimal:
		return decimalKernel{lo: v.Val, hi: v.Val}
	case string:
		return stringKernel{match: func(s string) bool { return s == v }}
	case uuid.UUID:
		return bytesKernel{match: func(b []byte) bool { return bytes.Equal(b, v[:]) }}
	case []byte:
		return bytesKernel{match: func(b []byte) bool { return bytes.Equal(b, v) }}
	}

	return nil
}

func (f *field) truncateKernel(v any) kernel {
	w := int64(f.width)
	switch v := v.(type) {
	case int32, int64:
		return intRange(f.srcType)(f.truncateSpan(intOf(v)))
	case iceberg.Decimal:
		hi := new(big.Int).Add(v.Val.BigInt(), big.NewInt(w-1))

		return decimalKernel{lo: v.Val, hi: decimal128.FromBigInt(hi)}
	case string:
		if utf8.RuneCountInString(v) < f.width {
			return stringKernel{match: func(s string) bool { return s == v }}
		}

		return stringKernel{match: func(s string) bool { return strings.HasPrefix(s, v) }}
	case []byte:
		if len(v) < f.width {
			return bytesKernel{match: func(b []byte) bool { return bytes.Equal(b, v) }}
		}

		return bytesKernel{match: func(b []byte) bool { return bytes.HasPrefix(b, v) }}
	}

	return nil
}

// truncateSpan is the source range [lo, hi) of the int or long values
// whose truncation to f.width is v: [v, v+width), or for the wrapped
// truncation of the type's minimum (see truncated) the values from the
// minimum up to the first multiple of the width.
func (f *field) truncateSpan(v int64) (lo, hi *big.Int) {
	w := big.NewInt(int64(f.width))
	lo = big.NewInt(v)
	if v%int64(f.width) == 0 {
		return lo, new(big.Int).Add(lo, w)
	}
	lo = big.NewInt(math.MinInt64)
	if _, ok := f.srcType.(iceberg.Int32Type); ok {
		lo = big.NewInt(math.MinInt32)
	}
	m := new(big.Int).Mod(lo, w) // Euclidean: in [0, width)
	hi = new(big.Int).Sub(lo, m)

	return lo, hi.Add(hi, w)
}

// intOf is an integer-backed value as int64.
func intOf(v any) int64 {
	switch v := v.(type) {
	case int32:
		return int64(v)
	case int64:
		return v
	case iceberg.Date:
		return int64(v)
	case iceberg.Time:
		return int64(v)
	case iceberg.Timestamp:
		return int64(v)
	case iceberg.TimestampNano:
		return int64(v)
	}

	return 0
}
