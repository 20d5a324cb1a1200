package schema

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// FuzzResolve builds a table schema and an input schema from the seed bytes:
// input columns reordered, identified by field ID, current name or name-mapping
// alias, with promotable or incompatible types, optional columns left out,
// unknown columns added. Resolve must never panic, must fail exactly when the
// generator used an incompatible type or left out a required column, and
// whatever it accepts, Apply on a generated batch must yield a batch of
// Schema() whose mapped values equal the input's and whose other columns are
// null.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", "\x00", "hello, world", "\x05\x01\x02\x03\x04\x05\x06\x07\x08\x09",
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8", "\x03\x0c\x00\x01\x0d\x02\x01\x0e\x10\x20\x30\x40\x50"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		g := &gen{b: seed}
		tbl, in, exp, wantErr := g.schemas()
		nm := aliasMapping(tbl.NameMapping())

		r, err := Resolve(in, tbl, nm, IgnoreUnknown)
		switch {
		case wantErr && err == nil:
			t.Fatalf("Resolve(%s, %s) = nil error, want error", in, tbl)
		case !wantErr && err != nil:
			t.Fatalf("Resolve(%s, %s) = %v, want nil", in, tbl, err)
		case err != nil:
			if !errors.Is(err, ErrIncompatibleType) && !errors.Is(err, ErrMissingRequired) {
				t.Fatalf("Resolve(%s, %s) = %v, want %v or %v", in, tbl, err, ErrIncompatibleType, ErrMissingRequired)
			}
			return
		}

		ctx := checked(t)
		rec := g.batch(compute.GetAllocator(ctx), in)
		defer rec.Release()
		out, err := r.Apply(ctx, rec)
		if err != nil {
			t.Fatalf("Apply(%s) = %v", rows(t, rec), err)
		}
		defer out.Release()
		if !out.Schema().Equal(r.Schema()) {
			t.Fatalf("Apply(...).Schema() = %s, want %s", out.Schema(), r.Schema())
		}
		for k, e := range exp {
			var src arrow.Array
			if e.src >= 0 {
				src = rec.Column(e.src)
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				if msg := compare(e, out.Column(k), src, i); msg != "" {
					t.Fatalf("Apply(%s) column %q row %d: %s", rows(t, rec), tbl.Field(k).Name, i, msg)
				}
			}
		}
	})
}

// gen draws choices from the seed bytes, then zeros.
type gen struct {
	b  []byte
	i  int
	id int
}

func (g *gen) n(max int) int {
	if g.i >= len(g.b) {
		return 0
	}
	v := int(g.b[g.i])
	g.i++
	return v % max
}

func (g *gen) nextID() int { g.id++; return g.id }

// kind is one Iceberg primitive type with Arrow input types that may and
// may not be written into it.
type kind struct {
	ice  iceberg.Type
	good []arrow.DataType
	bad  []arrow.DataType
}

var kinds = []kind{
	{iceberg.PrimitiveTypes.Int32,
		[]arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16},
		[]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint32, arrow.BinaryTypes.String}},
	{iceberg.PrimitiveTypes.Int64,
		[]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Int8},
		[]arrow.DataType{arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float64}},
	{iceberg.PrimitiveTypes.Float32,
		[]arrow.DataType{arrow.PrimitiveTypes.Float32},
		[]arrow.DataType{arrow.PrimitiveTypes.Float64}},
	{iceberg.PrimitiveTypes.Float64,
		[]arrow.DataType{arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32},
		[]arrow.DataType{arrow.PrimitiveTypes.Int64}},
	{iceberg.PrimitiveTypes.String,
		[]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString},
		[]arrow.DataType{arrow.BinaryTypes.Binary}},
	{iceberg.PrimitiveTypes.Binary,
		[]arrow.DataType{arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary},
		[]arrow.DataType{arrow.BinaryTypes.String}},
	{iceberg.DecimalTypeOf(10, 2),
		[]arrow.DataType{&arrow.Decimal128Type{Precision: 10, Scale: 2}, &arrow.Decimal128Type{Precision: 5, Scale: 2},
			&arrow.Decimal64Type{Precision: 9, Scale: 2}, &arrow.Decimal32Type{Precision: 4, Scale: 2}},
		[]arrow.DataType{&arrow.Decimal128Type{Precision: 12, Scale: 2}, &arrow.Decimal128Type{Precision: 10, Scale: 3}}},
	{iceberg.PrimitiveTypes.Timestamp,
		[]arrow.DataType{&arrow.TimestampType{Unit: arrow.Second}, &arrow.TimestampType{Unit: arrow.Millisecond},
			&arrow.TimestampType{Unit: arrow.Microsecond}, &arrow.TimestampType{Unit: arrow.Nanosecond}},
		[]arrow.DataType{arrow.FixedWidthTypes.Timestamp_us}},
	{iceberg.PrimitiveTypes.TimestampTz,
		[]arrow.DataType{arrow.FixedWidthTypes.Timestamp_us, &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "Etc/UTC"},
			&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Z"}, &arrow.TimestampType{Unit: arrow.Second, TimeZone: "+00:00"}},
		[]arrow.DataType{&arrow.TimestampType{Unit: arrow.Microsecond}}},
	{iceberg.PrimitiveTypes.Bool,
		[]arrow.DataType{arrow.FixedWidthTypes.Boolean},
		[]arrow.DataType{arrow.PrimitiveTypes.Int8}},
	{iceberg.PrimitiveTypes.Date,
		[]arrow.DataType{arrow.FixedWidthTypes.Date32},
		[]arrow.DataType{arrow.FixedWidthTypes.Date64}},
}

// expect records, for one table field, which input field feeds it.
type expect struct {
	src  int // index of the input field among its siblings; -1 if none
	kids []expect
}

// schemas generates a table schema, an input schema, the expected mapping
// of the top-level table columns, and whether Resolve must fail.
func (g *gen) schemas() (*iceberg.Schema, *arrow.Schema, []expect, bool) {
	fields, in, exp, bad := g.level(1+g.n(6), 2)
	return iceberg.NewSchema(0, fields...), arrow.NewSchema(in, nil), exp, bad
}

// level generates n table fields and the input fields of one struct level.
func (g *gen) level(n, depth int) ([]iceberg.NestedField, []arrow.Field, []expect, bool) {
	var (
		tbl []iceberg.NestedField
		in  []arrow.Field
		exp []expect
		bad bool
	)
	for range n {
		t, f, e, b, ok := g.field(depth)
		tbl = append(tbl, t)
		bad = bad || b
		e.src = -1
		if ok {
			e.src = len(in)
			in = append(in, f)
		}
		exp = append(exp, e)
	}
	for range g.n(3) { // unknown fields
		id := -1
		if g.n(2) == 0 {
			id = 10000 + g.nextID()
		}
		in = append(in, fld(fmt.Sprintf("zz%d", g.nextID()), kinds[g.n(len(kinds))].good[0], id))
	}

	// Shuffle the input, keeping the expected sources in step.
	perm := make([]int, len(in)) // perm[new] = old
	for i := range perm {
		perm[i] = i
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := g.n(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	shuffled := make([]arrow.Field, len(in))
	where := make([]int, len(in)) // where[old] = new
	for i, p := range perm {
		shuffled[i], where[p] = in[p], i
	}
	for k := range exp {
		if exp[k].src >= 0 {
			exp[k].src = where[exp[k].src]
		}
	}
	return tbl, shuffled, exp, bad
}

// field generates one table field and, if ok, its input field.
func (g *gen) field(depth int) (t iceberg.NestedField, f arrow.Field, e expect, bad, ok bool) {
	id := g.nextID()
	t = iceberg.NestedField{ID: id, Name: fmt.Sprintf("f%d", id), Required: g.n(3) == 0}

	shape := g.n(6)
	if depth == 0 {
		shape = 0
	}
	var dt arrow.DataType
	switch shape {
	case 4: // struct
		kids, in, exp, b := g.level(1+g.n(3), depth-1)
		t.Type, dt, e.kids, bad = &iceberg.StructType{FieldList: kids}, arrow.StructOf(in...), exp, b
	case 5: // list
		elemID := g.nextID()
		k := kinds[g.n(len(kinds))]
		elem, b := g.leafType(k)
		lt := &iceberg.ListType{ElementID: elemID, Element: k.ice, ElementRequired: g.n(2) == 0}
		ef := fld("item", elem, -1)
		if g.n(2) == 0 {
			ef = fld("element", elem, elemID)
		}
		ef.Nullable = !lt.ElementRequired
		t.Type, bad = lt, b
		if g.n(2) == 0 {
			dt = arrow.ListOfField(ef)
		} else {
			dt = arrow.LargeListOfField(ef)
		}
	default:
		k := kinds[g.n(len(kinds))]
		t.Type = k.ice
		dt, bad = g.leafType(k)
	}

	if !t.Required && g.n(4) == 0 { // left out
		return t, f, e, false, false
	}
	if t.Required && g.n(16) == 0 { // required left out
		return t, f, e, true, false
	}
	switch g.n(3) {
	case 0:
		f = fld(fmt.Sprintf("id%d", id), dt, id)
	case 1:
		f = fld(t.Name, dt, -1)
	default:
		f = fld("old_"+t.Name, dt, -1)
	}
	f.Nullable = !t.Required
	return t, f, e, bad, true
}

func (g *gen) leafType(k kind) (arrow.DataType, bool) {
	if g.n(8) == 0 {
		return k.bad[g.n(len(k.bad))], true
	}
	return k.good[g.n(len(k.good))], false
}

// aliasMapping adds "old_<name>" as an alias of every struct field.
func aliasMapping(nm iceberg.NameMapping) iceberg.NameMapping {
	var walk func([]iceberg.MappedField) []iceberg.MappedField
	walk = func(fs []iceberg.MappedField) []iceberg.MappedField {
		out := make([]iceberg.MappedField, len(fs))
		for i, f := range fs {
			f.Fields = walk(f.Fields)
			if n := f.Names[0]; n != "element" && n != "key" && n != "value" {
				f.Names = append([]string{n}, "old_"+n)
			}
			out[i] = f
		}
		return out
	}
	return walk(nm)
}

// batch generates up to 20 rows of sc, with nulls only in nullable fields.
func (g *gen) batch(mem memory.Allocator, sc *arrow.Schema) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	rows := g.n(21)
	for range rows {
		for i, f := range sc.Fields() {
			g.value(b.Field(i), f)
		}
	}
	return b.NewRecordBatch()
}

func (g *gen) value(b array.Builder, f arrow.Field) {
	if f.Nullable && g.n(4) == 0 {
		b.AppendNull()
		return
	}
	v := int64(g.n(256)-128) * int64(1+g.n(1<<7))
	switch b := b.(type) {
	case *array.StructBuilder:
		b.Append(true)
		for i, c := range f.Type.(*arrow.StructType).Fields() {
			g.value(b.FieldBuilder(i), c)
		}
	case *array.ListBuilder:
		b.Append(true)
		for range g.n(4) {
			g.value(b.ValueBuilder(), f.Type.(*arrow.ListType).ElemField())
		}
	case *array.LargeListBuilder:
		b.Append(true)
		for range g.n(4) {
			g.value(b.ValueBuilder(), f.Type.(*arrow.LargeListType).ElemField())
		}
	case *array.Int8Builder:
		b.Append(int8(v))
	case *array.Int16Builder:
		b.Append(int16(v))
	case *array.Int32Builder:
		b.Append(int32(v))
	case *array.Int64Builder:
		b.Append(v * 1e9)
	case *array.Uint8Builder:
		b.Append(uint8(v))
	case *array.Uint16Builder:
		b.Append(uint16(v))
	case *array.Uint32Builder:
		b.Append(uint32(v) * 7919)
	case *array.Uint64Builder:
		b.Append(uint64(v))
	case *array.Float32Builder:
		b.Append(float32(v) / 3)
	case *array.Float64Builder:
		b.Append(float64(v) / 3)
	case *array.StringBuilder:
		b.Append(fmt.Sprint("s", v))
	case *array.LargeStringBuilder:
		b.Append(fmt.Sprint("s", v))
	case *array.BinaryBuilder:
		b.Append([]byte{byte(v), 0})
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v % 100))
	case *array.Decimal64Builder:
		b.Append(decimal.Decimal64(v))
	case *array.Decimal32Builder:
		b.Append(decimal.Decimal32(v % 100))
	case *array.TimestampBuilder:
		ts := v * 997
		if b.Type().(*arrow.TimestampType).Unit == arrow.Nanosecond {
			ts *= 1000 // whole microseconds: finer nanoseconds are refused (TestApplyNanosecondsRefused)
		}
		b.Append(arrow.Timestamp(ts))
	case *array.BooleanBuilder:
		b.Append(v%2 == 0)
	case *array.Date32Builder:
		b.Append(arrow.Date32(v))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v))
	default:
		panic(fmt.Sprintf("no value generator for %T", b))
	}
}

// compare returns "" if out[i] holds in[i] (or null if in is nil), else a
// description of the difference.
func compare(e expect, out, in arrow.Array, i int) string {
	if in == nil || in.IsNull(i) {
		if !out.IsNull(i) {
			return fmt.Sprintf("got %s, want null", out.ValueStr(i))
		}
		return ""
	}
	if out.IsNull(i) {
		return fmt.Sprintf("got null, want %s", in.ValueStr(i))
	}
	switch out := out.(type) {
	case *array.Struct:
		for k, ke := range e.kids {
			var src arrow.Array
			if ke.src >= 0 {
				src = in.(*array.Struct).Field(ke.src)
			}
			if msg := compare(ke, out.Field(k), src, i); msg != "" {
				return fmt.Sprintf("field %d: %s", k, msg)
			}
		}
		return ""
	case *array.List:
		il := in.(array.ListLike)
		os, oe := out.ValueOffsets(i)
		is, ie := il.ValueOffsets(i)
		if oe-os != ie-is {
			return fmt.Sprintf("got %d elements, want %d", oe-os, ie-is)
		}
		for j := int64(0); j < oe-os; j++ {
			if msg := compareAt(out.ListValues(), int(os+j), il.ListValues(), int(is+j)); msg != "" {
				return fmt.Sprintf("element %d: %s", j, msg)
			}
		}
		return ""
	}
	return compareAt(out, i, in, i)
}

// compareAt compares two primitive values at different indexes.
func compareAt(out arrow.Array, i int, in arrow.Array, j int) string {
	if in.IsNull(j) || out.IsNull(i) {
		if in.IsNull(j) != out.IsNull(i) {
			return fmt.Sprintf("got %s, want %s", out.ValueStr(i), in.ValueStr(j))
		}
		return ""
	}
	if got, want := norm(out, i), norm(in, j); got != want {
		return fmt.Sprintf("got %v (%s), want %v (%s)", got, out.DataType(), want, in.DataType())
	}
	return ""
}

// norm returns a comparable value for a primitive: integers as int64,
// floats as float64, decimals as their unscaled integer text, timestamps as
// microseconds.
func norm(a arrow.Array, i int) any {
	switch a := a.(type) {
	case *array.Timestamp:
		v := int64(a.Value(i))
		switch a.DataType().(*arrow.TimestampType).Unit {
		case arrow.Second:
			return v * 1e6
		case arrow.Millisecond:
			return v * 1e3
		case arrow.Nanosecond:
			return v / 1000
		}
		return v
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return a.Value(i).BigInt().String()
	case *array.Decimal64:
		return fmt.Sprint(int64(a.Value(i)))
	case *array.Decimal32:
		return fmt.Sprint(int64(a.Value(i)))
	case *array.Uint8, *array.Uint16, *array.Uint32, *array.Int8, *array.Int16, *array.Int32, *array.Int64:
		var n int64
		fmt.Sscan(a.ValueStr(i), &n)
		return n
	}
	return a.ValueStr(i)
}
