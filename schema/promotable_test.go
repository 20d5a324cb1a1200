package schema

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

func TestPromotable(t *testing.T) {
	p := iceberg.PrimitiveTypes
	good := []struct{ from, to iceberg.Type }{
		{p.Int32, p.Int32},
		{p.Int32, p.Int64},
		{p.Float32, p.Float64},
		{iceberg.DecimalTypeOf(10, 2), iceberg.DecimalTypeOf(12, 2)},
		{p.String, p.String},
		{p.Timestamp, p.Timestamp},
	}
	for _, tc := range good {
		if !Promotable(tc.from, tc.to) {
			t.Errorf("Promotable(%s, %s) = false, want true", tc.from, tc.to)
		}
	}
	bad := []struct{ from, to iceberg.Type }{
		{p.Int64, p.Float64}, // a long above 2^53 does not survive a double
		{p.Int32, p.Float64},
		{p.Int64, p.Int32},
		{p.Float64, p.Float32},
		{iceberg.DecimalTypeOf(12, 2), iceberg.DecimalTypeOf(10, 2)},
		{iceberg.DecimalTypeOf(10, 2), iceberg.DecimalTypeOf(12, 3)},
		{p.String, p.Int64},
		{p.Binary, p.String},
		{p.Timestamp, p.TimestampTz},
		{p.Timestamp, p.TimestampNs},
		{&iceberg.StructType{}, p.String},
		{nil, p.String},
	}
	for _, tc := range bad {
		if Promotable(tc.from, tc.to) {
			t.Errorf("Promotable(%v, %v) = true, want false", tc.from, tc.to)
		}
	}
}

// Promotable is the rule Resolve applies: for every pair of primitive
// types, it holds exactly when Resolve accepts an input column of the
// Arrow type iceberg-go writes for from into a column of type to.
func TestPromotableIsResolvesRule(t *testing.T) {
	p := iceberg.PrimitiveTypes
	types := []iceberg.Type{p.Bool, p.Int32, p.Int64, p.Float32, p.Float64, p.Date, p.Time,
		p.Timestamp, p.TimestampTz, p.TimestampNs, p.TimestampTzNs, p.String, p.Binary, p.UUID,
		iceberg.FixedTypeOf(16), iceberg.DecimalTypeOf(9, 2), iceberg.DecimalTypeOf(18, 2), iceberg.DecimalTypeOf(18, 3)}
	for _, from := range types {
		dt, err := table.TypeToArrowType(from, false, false)
		if err != nil {
			t.Fatal(err)
		}
		in := arrow.NewSchema([]arrow.Field{{Name: "n", Type: dt, Nullable: true}}, nil)
		for _, to := range types {
			_, err := Resolve(in, iceberg.NewSchema(0, opt(1, "n", to)), nil, IgnoreUnknown)
			if got, want := Promotable(from, to), err == nil; got != want {
				t.Errorf("Promotable(%s, %s) = %v, want %v (Resolve: %v)", from, to, got, want, err)
			}
		}
	}
}
