package schema

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// goDefaults are write-defaults as iceberg-go holds them just after a
// schema change; specDefaults in the JSON form of the Iceberg spec, as
// metadata written by Spark reads back.
var (
	goDefaults = []any{"std", int32(7), int64(-3), 1.5, true, iceberg.Date(20648), iceberg.Timestamp(1784000000000000),
		iceberg.Decimal{Val: decimal128.FromI64(1420), Scale: 2}, uuid.MustParse("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"), []byte{0xca, 0xfe}, "in"}
	specDefaults = []any{"std", 7.0, -3.0, 1.5, true, "2026-07-14", "2026-07-14T03:33:20+00:00",
		"14.20", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "cafe", "in"}
)

// defaulted has a write-default (d, in column order) on columns of most
// primitive types, on a required column and inside a struct.
func defaulted(d []any) *iceberg.Schema {
	withDefault := func(f iceberg.NestedField, v any) iceberg.NestedField {
		f.InitialDefault, f.WriteDefault = v, v
		return f
	}
	return iceberg.NewSchema(0,
		must(1, "id", iceberg.PrimitiveTypes.Int64),
		withDefault(opt(2, "tier", iceberg.PrimitiveTypes.String), d[0]),
		withDefault(opt(3, "n", iceberg.PrimitiveTypes.Int32), d[1]),
		withDefault(must(4, "l", iceberg.PrimitiveTypes.Int64), d[2]),
		withDefault(opt(5, "x", iceberg.PrimitiveTypes.Float64), d[3]),
		withDefault(opt(6, "ok", iceberg.PrimitiveTypes.Bool), d[4]),
		withDefault(opt(7, "day", iceberg.PrimitiveTypes.Date), d[5]),
		withDefault(opt(8, "at", iceberg.PrimitiveTypes.TimestampTz), d[6]),
		withDefault(opt(9, "price", iceberg.DecimalTypeOf(9, 2)), d[7]),
		withDefault(opt(10, "u", iceberg.PrimitiveTypes.UUID), d[8]),
		withDefault(opt(11, "raw", iceberg.PrimitiveTypes.Binary), d[9]),
		opt(12, "plain", iceberg.PrimitiveTypes.String),
		opt(13, "s", &iceberg.StructType{FieldList: []iceberg.NestedField{
			opt(14, "a", iceberg.PrimitiveTypes.Int64),
			withDefault(opt(15, "b", iceberg.PrimitiveTypes.String), d[10]),
		}}),
	)
}

// viaJSON is sch as it reads back from table metadata.
func viaJSON(t *testing.T, sch *iceberg.Schema) *iceberg.Schema {
	t.Helper()
	b, err := json.Marshal(sch)
	if err != nil {
		t.Fatal(err)
	}
	var out iceberg.Schema
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return &out
}

// TestApplyWriteDefault: a column the input does not supply, at the top
// level or in a struct, required or optional, is written with its
// write-default, whether the schema holds it as a Go value (just after the
// schema change) or in its JSON form (read back from metadata). A column
// without one is null; a supplied column keeps its values.
func TestApplyWriteDefault(t *testing.T) {
	const want = `{"at":"2026-07-14T03:33:20Z","day":"2026-07-14","id":1,"l":-3,"n":7,"ok":true,"plain":null,"price":"14.2","raw":"yv4=","s":{"a":5,"b":"in"},"tier":"gold","u":"f81d4fae-7dec-11d0-a765-00a0c91e6bf6","x":1.5}`
	in := arrow.NewSchema([]arrow.Field{
		fld("id", arrow.PrimitiveTypes.Int64, -1),
		fld("tier", arrow.BinaryTypes.String, -1),
		fld("s", arrow.StructOf(fld("a", arrow.PrimitiveTypes.Int64, -1)), -1),
	}, nil)
	for name, sch := range map[string]*iceberg.Schema{
		"Go values": defaulted(goDefaults), "spec JSON": viaJSON(t, defaulted(specDefaults)),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := checked(t)
			res, err := Resolve(in, sch, nil, IgnoreUnknown)
			if err != nil {
				t.Fatalf("Resolve = %v", err)
			}
			rec := batch(t, ctx, in, `[{"id": 1, "tier": "gold", "s": {"a": 5}}]`)
			defer rec.Release()
			out, err := res.Apply(ctx, rec)
			if err != nil {
				t.Fatalf("Apply = %v", err)
			}
			defer out.Release()
			if got := rows(t, out); got != want {
				t.Errorf("Apply =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestApplyNullTypeIsSupplied: an input column of Arrow type null supplies
// nulls; the write-default is for columns not supplied at all.
func TestApplyNullTypeIsSupplied(t *testing.T) {
	ctx := checked(t)
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "tier", Type: iceberg.PrimitiveTypes.String, WriteDefault: "std"})
	in := arrow.NewSchema([]arrow.Field{fld("tier", arrow.Null, -1)}, nil)
	res, err := Resolve(in, sch, nil, IgnoreUnknown)
	if err != nil {
		t.Fatalf("Resolve = %v", err)
	}
	rec := batch(t, ctx, in, `[{"tier": null}]`)
	defer rec.Release()
	out, err := res.Apply(ctx, rec)
	if err != nil {
		t.Fatalf("Apply = %v", err)
	}
	defer out.Release()
	if got := rows(t, out); got != `{"tier":null}` {
		t.Errorf("Apply = %s, want tier null", got)
	}
}

// TestResolveBadWriteDefault: a write-default that is not a value of its
// column's type fails Resolve with ErrIncompatibleType.
func TestResolveBadWriteDefault(t *testing.T) {
	sch := iceberg.NewSchema(0,
		must(1, "id", iceberg.PrimitiveTypes.Int64),
		iceberg.NestedField{ID: 2, Name: "day", Type: iceberg.PrimitiveTypes.Date, WriteDefault: "not a date"})
	in := arrow.NewSchema([]arrow.Field{fld("id", arrow.PrimitiveTypes.Int64, -1)}, nil)
	if _, err := Resolve(in, sch, nil, IgnoreUnknown); !errors.Is(err, ErrIncompatibleType) {
		t.Fatalf("Resolve = %v, want ErrIncompatibleType", err)
	}
}
