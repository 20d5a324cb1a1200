package schema

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// decimals has a decimal(10,2) column at the top level, in a struct, as a
// list element and as a map value.
var decimals = iceberg.NewSchema(0,
	opt(1, "d", iceberg.DecimalTypeOf(10, 2)),
	opt(2, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{opt(3, "d", iceberg.DecimalTypeOf(10, 2))}}),
	opt(4, "l", &iceberg.ListType{ElementID: 5, Element: iceberg.DecimalTypeOf(10, 2), ElementRequired: false}),
	opt(6, "m", &iceberg.MapType{KeyID: 7, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 8, ValueType: iceberg.DecimalTypeOf(10, 2), ValueRequired: false}),
)

var (
	dec10   = &arrow.Decimal128Type{Precision: 10, Scale: 2}
	tenTo10 = decimal128.FromI64(10_000_000_000)
	minI128 = decimal128.New(math.MinInt64, 0)
	maxI128 = decimal128.New(math.MaxInt64, math.MaxUint64)
)

// oneColumn is a batch of one input column f filled by fill, one call per row.
func oneColumn(t *testing.T, f arrow.Field, n int, fill func(b array.Builder, row int)) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(compute.GetAllocator(checked(t)), arrow.NewSchema([]arrow.Field{f}, nil))
	defer b.Release()
	for i := range n {
		fill(b.Field(0), i)
	}
	return b.NewRecordBatch()
}

func appendDecimals(vals ...decimal128.Num) func(b array.Builder, row int) {
	return func(b array.Builder, row int) { b.(*array.Decimal128Builder).Append(vals[row]) }
}

// TestApplyDecimalPrecision: Apply refuses a decimal value with more
// digits than its column's precision, at any depth and whatever its input
// type, with ErrIncompatibleType naming the column and the row; values
// within the precision pass, and so do the bytes under a null.
func TestApplyDecimalPrecision(t *testing.T) {
	most := decimal128.FromI64(9_999_999_999) // 10 digits
	structOf := func(vals ...decimal128.Num) func(b array.Builder, row int) {
		return func(b array.Builder, row int) {
			st := b.(*array.StructBuilder)
			st.Append(true)
			st.FieldBuilder(0).(*array.Decimal128Builder).Append(vals[row])
		}
	}
	tests := []struct {
		name string
		f    arrow.Field
		n    int
		fill func(b array.Builder, row int)
		want string // "" for success; else the column and row the error names
	}{
		{"within precision", fld("d", dec10, 1), 2, appendDecimals(most, most.Negate()), ""},
		{"10^P", fld("d", dec10, 1), 2, appendDecimals(most, tenTo10), `"d": row 1`},
		{"-10^P", fld("d", dec10, 1), 1, appendDecimals(tenTo10.Negate()), `"d": row 0`},
		{"-2^127", fld("d", dec10, 1), 1, appendDecimals(minI128), `"d": row 0`},
		{"2^127-1", fld("d", dec10, 1), 1, appendDecimals(maxI128), `"d": row 0`},
		{"null over a wide value", fld("d", dec10, 1), 2, func(b array.Builder, row int) {
			b.(*array.Decimal128Builder).AppendValues([]decimal128.Num{minI128}, []bool{false})
		}, ""},
		{"narrower input type", fld("d", &arrow.Decimal128Type{Precision: 5, Scale: 2}, 1), 1, appendDecimals(tenTo10), `"d": row 0`},
		{"decimal64 input", fld("d", &arrow.Decimal64Type{Precision: 5, Scale: 2}, 1), 1, func(b array.Builder, _ int) {
			b.(*array.Decimal64Builder).Append(math.MaxInt64)
		}, `"d": row 0`},
		{"in a struct", fld("s", arrow.StructOf(fld("d", dec10, 3)), 2), 2, structOf(most, tenTo10), `"s.d": row 1`},
		{"in a null struct", fld("s", arrow.StructOf(fld("d", dec10, 3)), 2), 1, func(b array.Builder, _ int) {
			st := b.(*array.StructBuilder)
			st.AppendNull()
			st.FieldBuilder(0).(*array.Decimal128Builder).Append(minI128)
		}, ""},
		{"list element", fld("l", arrow.ListOfField(fld("element", dec10, 5)), 4), 3, func(b array.Builder, row int) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.Decimal128Builder).AppendValues([]decimal128.Num{most, []decimal128.Num{most, most, minI128}[row]}, nil)
		}, `"l.element": row 2`},
		{"map value", fld("m", arrow.MapOfFields(req(fld("key", arrow.BinaryTypes.String, 7)), fld("value", dec10, 8)), 6), 2, func(b array.Builder, row int) {
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			mb.KeyBuilder().(*array.StringBuilder).Append("k")
			mb.ItemBuilder().(*array.Decimal128Builder).Append([]decimal128.Num{most, tenTo10.Negate()}[row])
		}, `"m.value": row 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := checked(t)
			rec := oneColumn(t, tc.f, tc.n, tc.fill)
			defer rec.Release()
			res, err := Resolve(rec.Schema(), decimals, nil, IgnoreUnknown)
			if err != nil {
				t.Fatalf("Resolve(%s) = %v", rec.Schema(), err)
			}
			out, err := res.Apply(ctx, rec)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Apply = %v, want success", err)
				}
				out.Release()
				return
			}
			if err == nil {
				out.Release()
				t.Fatalf("Apply = success, want ErrIncompatibleType at %s", tc.want)
			}
			if !errors.Is(err, ErrIncompatibleType) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Apply = %v, want ErrIncompatibleType at %s", err, tc.want)
			}
		})
	}
}
