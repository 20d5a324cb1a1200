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

// Unsigned integers (DuckDB's UINTEGER and UBIGINT, written as Parquet
// UINT_32 and UINT_64) go into the Iceberg types that hold every value:
// uint32 into long, uint64 into decimal(20, 0) or wider, exactly, the
// largest values included. A narrower table type is refused at Resolve.
func TestApplyUnsigned(t *testing.T) {
	ctx := checked(t)
	tbl := iceberg.NewSchema(0, opt(1, "u32", iceberg.PrimitiveTypes.Int64), opt(2, "u64", iceberg.DecimalTypeOf(20, 0)))
	in := arrow.NewSchema([]arrow.Field{
		fld("u32", arrow.PrimitiveTypes.Uint32, 1),
		fld("u64", arrow.PrimitiveTypes.Uint64, 2),
	}, nil)
	r, err := Resolve(in, tbl, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	mem := compute.GetAllocator(ctx)
	bldr := array.NewRecordBuilder(mem, in)
	defer bldr.Release()
	u32 := []uint32{0, 1, math.MaxUint32, 1 << 31}
	u64 := []uint64{0, 1, math.MaxUint64, 1 << 63}
	bldr.Field(0).(*array.Uint32Builder).AppendValues(u32, nil)
	bldr.Field(0).(*array.Uint32Builder).AppendNull()
	bldr.Field(1).(*array.Uint64Builder).AppendValues(u64, nil)
	bldr.Field(1).(*array.Uint64Builder).AppendNull()
	rec := bldr.NewRecordBatch()
	defer rec.Release()
	out, err := r.Apply(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	longs, decs := out.Column(0).(*array.Int64), out.Column(1).(*array.Decimal128)
	for i := range u32 {
		if got := longs.Value(i); got != int64(u32[i]) {
			t.Errorf("u32[%d] = %d, want %d", i, got, u32[i])
		}
		if got, want := decs.Value(i), decimal128.FromU64(u64[i]); got != want {
			t.Errorf("u64[%d] = %v, want %v", i, got, want)
		}
	}
	if !longs.IsNull(4) || !decs.IsNull(4) {
		t.Errorf("nulls stay null")
	}

	for _, narrow := range []iceberg.Type{iceberg.DecimalTypeOf(19, 0), iceberg.DecimalTypeOf(22, 1), iceberg.PrimitiveTypes.Int64} {
		tbl := iceberg.NewSchema(0, opt(2, "u64", narrow))
		if _, err := Resolve(arrow.NewSchema([]arrow.Field{fld("u64", arrow.PrimitiveTypes.Uint64, 2)}, nil), tbl, nil, IgnoreUnknown); !errors.Is(err, ErrIncompatibleType) {
			t.Errorf("Resolve(uint64 into %s) = %v, want ErrIncompatibleType", narrow, err)
		}
	}
}

// Nanosecond input into a microsecond column: whole microseconds convert
// exactly (negative ones too); a value with nanoseconds below the
// microsecond is refused, naming the column and row, rather than stored
// as another instant. A slice's rows are counted from the slice.
func TestApplyNanosecondsRefused(t *testing.T) {
	ctx := checked(t)
	tbl := iceberg.NewSchema(0, opt(1, "ts", iceberg.PrimitiveTypes.TimestampTz))
	in := arrow.NewSchema([]arrow.Field{fld("ts", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, 1)}, nil)
	r, err := Resolve(in, tbl, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	whole := batch(t, ctx, in, `[{"ts": -2000}, {"ts": null}, {"ts": 1000}, {"ts": 1500}]`)
	defer whole.Release()
	head := whole.NewSlice(0, 3)
	defer head.Release()
	out, err := r.Apply(ctx, head)
	if err != nil {
		t.Fatalf("Apply(whole microseconds) = %v", err)
	}
	defer out.Release()
	if got, want := rows(t, out), `{"ts":"1969-12-31T23:59:59.999998Z"}`+"\n"+`{"ts":null}`+"\n"+`{"ts":"1970-01-01T00:00:00.000001Z"}`; got != want {
		t.Errorf("Apply = %s, want %s", got, want)
	}
	tail := whole.NewSlice(1, 4)
	defer tail.Release()
	if out, err := r.Apply(ctx, tail); !errors.Is(err, ErrIncompatibleType) || !strings.Contains(err.Error(), `column "ts": row 2 holds 1500 ns`) {
		if err == nil {
			out.Release()
		}
		t.Errorf("Apply(1500 ns) = %v, want ErrIncompatibleType at row 2", err)
	}
}
