package schema

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
)

// pair is a table of two long columns of the same type, the setting in which
// positional resolution would silently swap values.
var pair = iceberg.NewSchema(0,
	must(1, "a", iceberg.PrimitiveTypes.Int64),
	opt(2, "b", iceberg.PrimitiveTypes.Int64),
)

func TestApplyGood(t *testing.T) {
	pairMapping := mustPairMapping()
	tests := []struct {
		name string
		in   []arrow.Field
		tbl  *iceberg.Schema
		nm   iceberg.NameMapping
		rows string
		want string
	}{
		{
			name: "positional trap by id under other names",
			in:   []arrow.Field{fld("x", arrow.PrimitiveTypes.Int64, 2), fld("y", arrow.PrimitiveTypes.Int64, 1)},
			tbl:  pair,
			rows: `[{"x": 10, "y": 1}, {"x": 20, "y": 2}]`,
			want: `{"a":1,"b":10}` + "\n" + `{"a":2,"b":20}`,
		},
		{
			name: "positional trap by name",
			in:   []arrow.Field{fld("b", arrow.PrimitiveTypes.Int64, -1), fld("a", arrow.PrimitiveTypes.Int64, -1)},
			tbl:  pair,
			rows: `[{"b": 10, "a": 1}]`,
			want: `{"a":1,"b":10}`,
		},
		{
			name: "positional trap by alias after rename",
			in:   []arrow.Field{fld("old_b", arrow.PrimitiveTypes.Int64, -1), fld("a", arrow.PrimitiveTypes.Int64, -1)},
			tbl:  pair,
			nm:   pairMapping,
			rows: `[{"old_b": 10, "a": 1}]`,
			want: `{"a":1,"b":10}`,
		},
		{
			name: "id wins over name",
			in:   []arrow.Field{fld("a", arrow.PrimitiveTypes.Int64, 2), fld("b", arrow.PrimitiveTypes.Int64, 1)},
			tbl:  pair,
			rows: `[{"a": 10, "b": 1}]`,
			want: `{"a":1,"b":10}`,
		},
		{
			name: "missing optional is null, unknown dropped",
			in:   []arrow.Field{fld("extra", arrow.BinaryTypes.String, -1), fld("a", arrow.PrimitiveTypes.Int64, -1)},
			tbl:  pair,
			rows: `[{"extra": "x", "a": 1}, {"extra": "y", "a": 2}]`,
			want: `{"a":1,"b":null}` + "\n" + `{"a":2,"b":null}`,
		},
		{
			name: "int32 to long",
			in:   []arrow.Field{fld("b", arrow.PrimitiveTypes.Int32, 2), fld("a", arrow.PrimitiveTypes.Int8, 1)},
			tbl:  pair,
			rows: `[{"b": 2147483647, "a": -128}, {"b": null, "a": 0}]`,
			want: `{"a":-128,"b":2147483647}` + "\n" + `{"a":0,"b":null}`,
		},
		{
			name: "float to double",
			in:   []arrow.Field{fld("f", arrow.PrimitiveTypes.Float32, 1)},
			tbl:  iceberg.NewSchema(0, opt(1, "f", iceberg.PrimitiveTypes.Float64)),
			rows: `[{"f": 1.5}, {"f": null}]`,
			want: `{"f":1.5}` + "\n" + `{"f":null}`,
		},
		{
			name: "decimal precision up",
			in:   []arrow.Field{fld("d", &arrow.Decimal128Type{Precision: 5, Scale: 2}, 1), fld("e", &arrow.Decimal64Type{Precision: 5, Scale: 2}, 2)},
			tbl:  iceberg.NewSchema(0, opt(1, "d", iceberg.DecimalTypeOf(10, 2)), opt(2, "e", iceberg.DecimalTypeOf(12, 2))),
			rows: `[{"d": "123.45", "e": "-0.01"}]`,
			want: `{"d":"123.45","e":"-0.01"}`,
		},
		{
			name: "large string and binary",
			in:   []arrow.Field{fld("s", arrow.BinaryTypes.LargeString, 1), fld("b", arrow.BinaryTypes.LargeBinary, 2)},
			tbl:  iceberg.NewSchema(0, opt(1, "s", iceberg.PrimitiveTypes.String), opt(2, "b", iceberg.PrimitiveTypes.Binary)),
			rows: `[{"s": "héllo", "b": "AQI="}]`,
			want: `{"b":"AQI=","s":"héllo"}`,
		},
		{
			name: "dictionaries decoded to their values, then promoted",
			in: []arrow.Field{
				fld("s", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, 1),
				fld("b", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.Binary}, 2),
				fld("i", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.PrimitiveTypes.Int16}, 3),
			},
			tbl: iceberg.NewSchema(0, opt(1, "s", iceberg.PrimitiveTypes.String), opt(2, "b", iceberg.PrimitiveTypes.Binary),
				opt(3, "i", iceberg.PrimitiveTypes.Int64)),
			rows: `[{"s": "eur", "b": "AQI=", "i": 7}, {"s": null, "b": "AQI=", "i": null}, {"s": "eur", "b": "Aw==", "i": -2}]`,
			want: `{"b":"AQI=","i":7,"s":"eur"}` + "\n" + `{"b":"AQI=","i":null,"s":null}` + "\n" + `{"b":"Aw==","i":-2,"s":"eur"}`,
		},
		{
			name: "timestamp units",
			in: []arrow.Field{
				fld("s", &arrow.TimestampType{Unit: arrow.Second}, 1),
				fld("ms", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Etc/UTC"}, 2),
				fld("ns", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, 3),
				fld("neg", &arrow.TimestampType{Unit: arrow.Nanosecond}, 4),
			},
			tbl: iceberg.NewSchema(0,
				opt(1, "s", iceberg.PrimitiveTypes.Timestamp),
				opt(2, "ms", iceberg.PrimitiveTypes.TimestampTz),
				opt(3, "ns", iceberg.PrimitiveTypes.TimestampTz),
				opt(4, "neg", iceberg.PrimitiveTypes.Timestamp)),
			rows: `[{"s": 1, "ms": 1, "ns": 1000, "neg": -1000}]`,
			want: `{"ms":"1970-01-01T00:00:00.001Z","neg":"1969-12-31T23:59:59.999999","ns":"1970-01-01T00:00:00.000001Z","s":"1970-01-01T00:00:01"}`,
		},
		{
			name: "nested struct by id, reordered, promoted, missing optional child",
			in: []arrow.Field{
				req(fld("id", arrow.PrimitiveTypes.Int32, 1)),
				fld("address", arrow.StructOf(fld("z", arrow.PrimitiveTypes.Int16, 7), fld("town", arrow.BinaryTypes.LargeString, 6)), 5),
			},
			tbl:  orders,
			rows: `[{"id": 1, "address": {"z": 7, "town": "Oslo"}}, {"id": 2, "address": null}]`,
			want: `{"addr":{"city":"Oslo","zip":7},"amount":null,"attrs":null,"id":1,"name":null,"tags":null,"ts":null}` + "\n" +
				`{"addr":null,"amount":null,"attrs":null,"id":2,"name":null,"tags":null,"ts":null}`,
		},
		{
			name: "large list of large strings, map with promoted value",
			in: []arrow.Field{
				fld("tags", arrow.LargeListOf(arrow.BinaryTypes.LargeString), 8),
				fld("attrs", arrow.MapOf(arrow.BinaryTypes.LargeString, arrow.PrimitiveTypes.Int32), 10),
				req(fld("id", arrow.PrimitiveTypes.Int64, 1)),
			},
			tbl:  orders,
			rows: `[{"tags": ["a", null, "b"], "attrs": [{"key": "k", "value": 1}], "id": 1}, {"tags": null, "attrs": [], "id": 2}]`,
			want: `{"addr":null,"amount":null,"attrs":[{"key":"k","value":1}],"id":1,"name":null,"tags":["a",null,"b"],"ts":null}` + "\n" +
				`{"addr":null,"amount":null,"attrs":[],"id":2,"name":null,"tags":null,"ts":null}`,
		},
		{
			name: "list of structs resolved by id",
			in: []arrow.Field{fld("xs", arrow.ListOf(arrow.StructOf(
				fld("q", arrow.PrimitiveTypes.Int32, 4), fld("p", arrow.PrimitiveTypes.Int64, 3))), 1)},
			tbl: iceberg.NewSchema(0, opt(1, "xs", &iceberg.ListType{ElementID: 2, ElementRequired: true,
				Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
					must(3, "p", iceberg.PrimitiveTypes.Int64), opt(4, "q", iceberg.PrimitiveTypes.Int64)}}})),
			rows: `[{"xs": [{"q": 1, "p": 2}, {"q": null, "p": 4}]}]`,
			want: `{"xs":[{"p":2,"q":1},{"p":4,"q":null}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := checked(t)
			in := arrow.NewSchema(tt.in, nil)
			r, err := Resolve(in, tt.tbl, tt.nm, IgnoreUnknown)
			if err != nil {
				t.Fatalf("Resolve(%s) = %v", in, err)
			}
			rec := batch(t, ctx, in, tt.rows)
			defer rec.Release()
			out, err := r.Apply(ctx, rec)
			if err != nil {
				t.Fatalf("Apply(%s) = %v", tt.rows, err)
			}
			defer out.Release()
			if !out.Schema().Equal(r.Schema()) {
				t.Errorf("Apply(%s).Schema() = %s, want %s", tt.rows, out.Schema(), r.Schema())
			}
			if got := rows(t, out); got != tt.want {
				t.Errorf("Apply(%s) =\n%s\nwant\n%s", tt.rows, got, tt.want)
			}
			for i, c := range out.Columns() {
				if err := array.ValidateFull(c); err != nil {
					t.Errorf("Apply(%s) column %d: ValidateFull = %v", tt.rows, i, err)
				}
			}
		})
	}
}

func mustPairMapping() iceberg.NameMapping {
	old := iceberg.NewSchema(0, must(1, "a", iceberg.PrimitiveTypes.Int64), opt(2, "old_b", iceberg.PrimitiveTypes.Int64))
	nm, err := iceberg.UpdateNameMapping(old.NameMapping(),
		map[int]iceberg.NestedField{2: opt(2, "b", iceberg.PrimitiveTypes.Int64)}, nil)
	if err != nil {
		panic(err)
	}
	return nm
}

func TestApplyBad(t *testing.T) {
	listReq := iceberg.NewSchema(0, opt(1, "xs", &iceberg.ListType{ElementID: 2, ElementRequired: true, Element: iceberg.PrimitiveTypes.Int64}))
	mapTbl := iceberg.NewSchema(0, opt(1, "m", &iceberg.MapType{KeyID: 2, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 3, ValueType: iceberg.PrimitiveTypes.Int64, ValueRequired: true}))
	tests := []struct {
		name string
		in   []arrow.Field
		tbl  *iceberg.Schema
		rows string
		msg  string
	}{
		{"null in required top-level", []arrow.Field{fld("b", arrow.PrimitiveTypes.Int64, 2), fld("a", arrow.PrimitiveTypes.Int64, 1)}, pair,
			`[{"a": 1, "b": 1}, {"a": 2}, {"a": null}, {"a": null}]`, `column "a" is null at row 2`},
		{"null in required nested under valid parent", []arrow.Field{
			req(fld("id", arrow.PrimitiveTypes.Int64, 1)),
			fld("addr", arrow.StructOf(fld("city", arrow.BinaryTypes.String, 6)), 5)}, orders,
			`[{"id": 1, "addr": null}, {"id": 2, "addr": {"city": "x"}}, {"id": 3, "addr": {"city": null}}]`,
			`column "addr.city" is null at row 2`},
		{"null list element", []arrow.Field{fld("xs", arrow.ListOf(arrow.PrimitiveTypes.Int64), 1)}, listReq,
			`[{"xs": [1, 2]}, {"xs": null}, {"xs": []}, {"xs": [3, null]}]`, `column "xs.element" is null at row 3`},
		{"null map value", []arrow.Field{fld("m", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), 1)}, mapTbl,
			`[{"m": [{"key": "a", "value": 1}]}, {"m": [{"key": "b", "value": 2}, {"key": "c", "value": null}]}]`, `column "m.value" is null at row 1`},
		{"null in required struct field of list element", []arrow.Field{fld("xs", arrow.ListOf(arrow.StructOf(fld("p", arrow.PrimitiveTypes.Int64, 3))), 1)},
			iceberg.NewSchema(0, opt(1, "xs", &iceberg.ListType{ElementID: 2, Element: &iceberg.StructType{
				FieldList: []iceberg.NestedField{must(3, "p", iceberg.PrimitiveTypes.Int64)}}})),
			`[{"xs": [null, {"p": 1}]}, {"xs": [{"p": 2}, {"p": null}]}]`, `column "xs.element.p" is null at row 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := checked(t)
			in := arrow.NewSchema(tt.in, nil)
			r, err := Resolve(in, tt.tbl, nil, IgnoreUnknown)
			if err != nil {
				t.Fatalf("Resolve(%s) = %v", in, err)
			}
			rec := batch(t, ctx, in, tt.rows)
			defer rec.Release()
			out, err := r.Apply(ctx, rec)
			if err == nil {
				out.Release()
				t.Fatalf("Apply(%s) = nil error, want %v", tt.rows, ErrMissingRequired)
			}
			if !errors.Is(err, ErrMissingRequired) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Apply(%s) = %v, want %v containing %q", tt.rows, err, ErrMissingRequired, tt.msg)
			}
		})
	}
}

func TestApplyOtherSchema(t *testing.T) {
	ctx := checked(t)
	r, err := Resolve(arrow.NewSchema([]arrow.Field{fld("a", arrow.PrimitiveTypes.Int64, 1)}, nil), pair, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	rec := batch(t, ctx, arrow.NewSchema([]arrow.Field{fld("b", arrow.PrimitiveTypes.Int64, 2)}, nil), `[{"b": 1}]`)
	defer rec.Release()
	if out, err := r.Apply(ctx, rec); err == nil {
		out.Release()
		t.Errorf("Apply(batch of another schema) = nil error, want error")
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if out, err := r.Apply(canceled, rec); !errors.Is(err, context.Canceled) {
		if err == nil {
			out.Release()
		}
		t.Errorf("Apply(canceled) = %v, want %v", err, context.Canceled)
	}
}

// TestApplyZeroCopy checks that columns whose type matches share the input's
// buffers, at the top level and inside structs and lists.
func TestApplyZeroCopy(t *testing.T) {
	ctx := checked(t)
	in := arrow.NewSchema([]arrow.Field{
		fld("tags", tagsType, 8), fld("addr", addrType, 5), req(fld("id", arrow.PrimitiveTypes.Int64, 1)),
	}, nil)
	r, err := Resolve(in, orders, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	rec := batch(t, ctx, in, `[{"tags": ["a"], "addr": {"city": "c", "zip": 1}, "id": 7}]`)
	defer rec.Release()
	out, err := r.Apply(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()

	same := func(what string, got, want arrow.Array) {
		if got.Data().Buffers()[1] != want.Data().Buffers()[1] {
			t.Errorf("Apply: %s copied, want it shared", what)
		}
	}
	same("id", out.Column(0), rec.Column(2))
	same("addr.city", out.Column(4).(*array.Struct).Field(0), rec.Column(1).(*array.Struct).Field(0))
	same("tags offsets", out.Column(5), rec.Column(0))
	same("tags.element", out.Column(5).(*array.List).ListValues(), rec.Column(0).(*array.List).ListValues())
}

// TestApplySliced applies to a batch that is a slice of a larger one, so
// every array has a non-zero offset.
func TestApplySliced(t *testing.T) {
	ctx := checked(t)
	in := arrow.NewSchema([]arrow.Field{
		req(fld("id", arrow.PrimitiveTypes.Int32, 1)),
		fld("addr", arrow.StructOf(req(fld("city", arrow.BinaryTypes.LargeString, 6))), 5),
		fld("tags", arrow.LargeListOf(arrow.BinaryTypes.String), 8),
		fld("ts", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, 4),
		fld("attrs", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), 10),
	}, nil)
	r, err := Resolve(in, orders, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	full := batch(t, ctx, in, `[
		{"id": 0, "addr": {"city": null}, "tags": ["x"], "ts": 5, "attrs": [{"key": "p", "value": 0}]},
		{"id": 1, "addr": null, "tags": ["a", "b"], "ts": 1000, "attrs": [{"key": "q", "value": 1}]},
		{"id": 2, "addr": {"city": "c"}, "tags": null, "ts": null, "attrs": null},
		{"id": 3, "addr": {"city": "d"}, "tags": [], "ts": 2000, "attrs": [{"key": "r", "value": null}, {"key": "s", "value": 3}]},
		{"id": 4, "addr": {"city": null}, "tags": ["z"], "ts": 0, "attrs": []}]`)
	defer full.Release()
	rec := full.NewSlice(1, 4)
	defer rec.Release()

	out, err := r.Apply(ctx, rec)
	if err != nil {
		t.Fatalf("Apply(slice 1:4) = %v", err)
	}
	defer out.Release()
	want := `{"addr":null,"amount":null,"attrs":[{"key":"q","value":1}],"id":1,"name":null,"tags":["a","b"],"ts":"1970-01-01T00:00:00.000001Z"}
{"addr":{"city":"c","zip":null},"amount":null,"attrs":null,"id":2,"name":null,"tags":null,"ts":null}
{"addr":{"city":"d","zip":null},"amount":null,"attrs":[{"key":"r","value":null},{"key":"s","value":3}],"id":3,"name":null,"tags":[],"ts":"1970-01-01T00:00:00.000002Z"}`
	if got := rows(t, out); got != want {
		t.Errorf("Apply(slice 1:4) =\n%s\nwant\n%s", got, want)
	}

	bad := full.NewSlice(2, 5)
	defer bad.Release()
	if out, err := r.Apply(ctx, bad); !errors.Is(err, ErrMissingRequired) || !strings.Contains(err.Error(), `"addr.city" is null at row 2`) {
		if err == nil {
			out.Release()
		}
		t.Errorf("Apply(slice 2:5) = %v, want %v at row 2", err, ErrMissingRequired)
	}
}

// TestApplyUUID wraps fixed[16] input as the uuid extension the table's
// Arrow schema uses.
func TestApplyUUID(t *testing.T) {
	ctx := checked(t)
	tbl := iceberg.NewSchema(0, opt(1, "u", iceberg.PrimitiveTypes.UUID), opt(2, "d", iceberg.DecimalTypeOf(38, 0)))
	in := arrow.NewSchema([]arrow.Field{
		fld("d", &arrow.Decimal128Type{Precision: 20, Scale: 0}, 2),
		fld("u", &arrow.FixedSizeBinaryType{ByteWidth: 16}, 1),
	}, nil)
	r, err := Resolve(in, tbl, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	mem := compute.GetAllocator(ctx)
	bldr := array.NewRecordBuilder(mem, in)
	defer bldr.Release()
	bldr.Field(0).(*array.Decimal128Builder).Append(decimal128.FromI64(-42))
	bldr.Field(1).(*array.FixedSizeBinaryBuilder).Append([]byte("0123456789abcdef"))
	rec := bldr.NewRecordBatch()
	defer rec.Release()

	out, err := r.Apply(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	u, ok := out.Column(0).(*extensions.UUIDArray)
	if !ok {
		t.Fatalf("Apply: column u is %T, want *extensions.UUIDArray", out.Column(0))
	}
	if got, want := u.Value(0).String(), "30313233-3435-3637-3839-616263646566"; got != want {
		t.Errorf("Apply: u = %s, want %s", got, want)
	}
	if got, want := out.Column(1).(*array.Decimal128).Value(0), decimal128.FromI64(-42); got != want {
		t.Errorf("Apply: d = %v, want %v", got, want)
	}
}

// TestApplyConcurrent applies one Resolution from several goroutines; run
// with -race.
func TestApplyConcurrent(t *testing.T) {
	ctx := checked(t)
	in := arrow.NewSchema([]arrow.Field{fld("b", arrow.PrimitiveTypes.Int32, 2), fld("a", arrow.PrimitiveTypes.Int64, 1)}, nil)
	r, err := Resolve(in, pair, nil, IgnoreUnknown)
	if err != nil {
		t.Fatal(err)
	}
	rec := batch(t, ctx, in, `[{"b": 2, "a": 1}]`)
	defer rec.Release()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			out, err := r.Apply(ctx, rec)
			if err == nil {
				out.Release()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Apply in goroutine %d = %v", i, err)
		}
	}
}
