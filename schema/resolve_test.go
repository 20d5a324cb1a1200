package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// renamed is orders after "name" was renamed to "customer"; renamedMapping is
// the name mapping iceberg-go keeps for it, with "name" as an alias.
var (
	renamed        = iceberg.NewSchema(1, renameField(orders.Fields(), 2, "customer")...)
	renamedMapping = mustUpdateMapping(orders.NameMapping(), 2, "customer")
)

func renameField(fs []iceberg.NestedField, id int, name string) []iceberg.NestedField {
	fs = slices.Clone(fs)
	for i := range fs {
		if fs[i].ID == id {
			fs[i].Name = name
		}
	}
	return fs
}

func mustUpdateMapping(nm iceberg.NameMapping, id int, name string) iceberg.NameMapping {
	f, ok := renamedField(id, name)
	if !ok {
		panic("no field")
	}
	out, err := iceberg.UpdateNameMapping(nm, map[int]iceberg.NestedField{id: f}, nil)
	if err != nil {
		panic(err)
	}
	return out
}

func renamedField(id int, name string) (iceberg.NestedField, bool) {
	f, ok := orders.FindFieldByID(id)
	f.Name = name
	return f, ok
}

var (
	addrType = arrow.StructOf(req(fld("city", arrow.BinaryTypes.String, 6)), fld("zip", arrow.PrimitiveTypes.Int32, 7))
	tagsType = arrow.ListOfField(fld("element", arrow.BinaryTypes.String, 9))
)

func TestResolveGood(t *testing.T) {
	tests := []struct {
		name    string
		in      []arrow.Field
		tbl     *iceberg.Schema
		nm      iceberg.NameMapping
		policy  UnknownPolicy
		ignored []string
	}{
		{
			name: "by id under other names, reordered",
			in: []arrow.Field{
				fld("tags_x", tagsType, 8), fld("n", arrow.BinaryTypes.String, 2), req(fld("key", arrow.PrimitiveTypes.Int64, 1)),
			},
			tbl: orders,
		},
		{
			name: "by current name",
			in:   []arrow.Field{fld("name", arrow.BinaryTypes.String, -1), fld("id", arrow.PrimitiveTypes.Int64, -1)},
			tbl:  orders,
		},
		{
			name: "by name-mapping alias after rename",
			in:   []arrow.Field{fld("name", arrow.BinaryTypes.String, -1), fld("id", arrow.PrimitiveTypes.Int64, -1)},
			tbl:  renamed,
			nm:   renamedMapping,
		},
		{
			name: "unknown fields ignored and reported",
			in: []arrow.Field{
				fld("zzz", arrow.PrimitiveTypes.Int64, -1),
				fld("id", arrow.PrimitiveTypes.Int64, -1),
				fld("dropped", arrow.PrimitiveTypes.Int64, 99),
				fld("addr", arrow.StructOf(req(fld("city", arrow.BinaryTypes.String, -1)), fld("more", arrow.BinaryTypes.String, -1)), -1),
			},
			tbl:     orders,
			ignored: []string{"addr.more", "dropped", "zzz"},
		},
		{
			name: "promotions",
			in: []arrow.Field{
				fld("id", arrow.PrimitiveTypes.Int32, 1),
				fld("name", arrow.BinaryTypes.LargeString, 2),
				fld("amount", &arrow.Decimal128Type{Precision: 5, Scale: 2}, 3),
				fld("ts", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Z"}, 4),
				fld("addr", arrow.StructOf(req(fld("city", arrow.BinaryTypes.LargeString, 6)), fld("zip", arrow.PrimitiveTypes.Int16, 7)), 5),
				fld("tags", arrow.LargeListOf(arrow.BinaryTypes.LargeString), 8),
				fld("attrs", arrow.MapOf(arrow.BinaryTypes.LargeString, arrow.PrimitiveTypes.Int32), 10),
			},
			tbl: orders,
		},
		{
			name:   "all known under RejectUnknown",
			in:     []arrow.Field{fld("id", arrow.PrimitiveTypes.Int64, -1)},
			tbl:    orders,
			policy: RejectUnknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := arrow.NewSchema(tt.in, nil)
			r, err := Resolve(in, tt.tbl, tt.nm, tt.policy)
			if err != nil {
				t.Fatalf("Resolve(%s) = %v, want nil", in, err)
			}
			if got := r.Ignored(); !slices.Equal(got, tt.ignored) {
				t.Errorf("Resolve(%s).Ignored() = %q, want %q", in, got, tt.ignored)
			}
			want, err := table.SchemaToArrowSchema(tt.tbl, nil, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Schema(); !got.Equal(want) || !got.Metadata().Equal(want.Metadata()) {
				t.Errorf("Resolve(%s).Schema() = %s, want %s", in, got, want)
			}
		})
	}
}

func TestResolveBad(t *testing.T) {
	small := func(t iceberg.Type) *iceberg.Schema { return iceberg.NewSchema(0, must(1, "n", t)) }
	one := func(dt arrow.DataType) []arrow.Field { return []arrow.Field{fld("n", dt, 1)} }
	id := fld("id", arrow.PrimitiveTypes.Int64, 1)

	tests := []struct {
		name   string
		in     []arrow.Field
		tbl    *iceberg.Schema
		nm     iceberg.NameMapping
		policy UnknownPolicy
		want   error    // nil: any error
		msg    []string // substrings of the message
	}{
		{"missing required", []arrow.Field{fld("name", arrow.BinaryTypes.String, 2)}, orders, nil, 0,
			ErrMissingRequired, []string{`"id"`}},
		{"null type for required", []arrow.Field{fld("id", arrow.Null, 1)}, orders, nil, 0,
			ErrMissingRequired, []string{`"id"`, "null"}},
		{"long to int", one(arrow.PrimitiveTypes.Int64), small(iceberg.PrimitiveTypes.Int32), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "int64", "int"}},
		{"uint64 to long", one(arrow.PrimitiveTypes.Uint64), small(iceberg.PrimitiveTypes.Int64), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "uint64", "long"}},
		{"double to float", one(arrow.PrimitiveTypes.Float64), small(iceberg.PrimitiveTypes.Float32), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "float64", "float"}},
		{"decimal precision down", one(&arrow.Decimal128Type{Precision: 12, Scale: 2}), small(iceberg.DecimalTypeOf(10, 2)), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "decimal(12, 2)", "decimal(10, 2)"}},
		{"decimal scale change", one(&arrow.Decimal128Type{Precision: 9, Scale: 3}), small(iceberg.DecimalTypeOf(10, 2)), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "decimal(9, 3)"}},
		{"string to long", one(arrow.BinaryTypes.String), small(iceberg.PrimitiveTypes.Int64), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "utf8", "long"}},
		{"binary to string", one(arrow.BinaryTypes.Binary), small(iceberg.PrimitiveTypes.String), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "binary", "string"}},
		{"local timestamp to timestamptz", one(&arrow.TimestampType{Unit: arrow.Microsecond}), small(iceberg.PrimitiveTypes.TimestampTz), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "timestamptz"}},
		{"timestamptz to local timestamp", one(arrow.FixedWidthTypes.Timestamp_us), small(iceberg.PrimitiveTypes.Timestamp), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "timestamp"}},
		{"us to timestamp_ns", one(&arrow.TimestampType{Unit: arrow.Microsecond}), small(iceberg.PrimitiveTypes.TimestampNs), nil, 0,
			ErrIncompatibleType, []string{`"n"`, "timestamp_ns"}},
		{"list where struct expected", []arrow.Field{id, fld("addr", arrow.ListOf(arrow.BinaryTypes.String), 5)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"addr"`, "list<item: utf8", "struct<6: city"}},
		{"missing required nested", []arrow.Field{id, fld("addr", arrow.StructOf(fld("zip", arrow.PrimitiveTypes.Int32, 7)), 5)}, orders, nil, 0,
			ErrMissingRequired, []string{`"addr.city"`}},
		{"nested narrowing", []arrow.Field{id, fld("addr", arrow.StructOf(req(fld("city", arrow.BinaryTypes.String, 6)), fld("zip", arrow.PrimitiveTypes.Int64, 7)), 5)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"addr.zip"`, "int64", "int"}},
		{"list element mismatch", []arrow.Field{id, fld("tags", arrow.ListOf(arrow.PrimitiveTypes.Int64), 8)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"tags.element"`, "int64", "string"}},
		{"list element id mismatch", []arrow.Field{id, fld("tags", arrow.ListOfField(fld("element", arrow.BinaryTypes.String, 77)), 8)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"tags.element"`, "77", "9"}},
		{"map value narrowing", []arrow.Field{id, fld("attrs", arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), 10)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"attrs.value"`, "float64", "long"}},
		{"map where list expected", []arrow.Field{id, fld("tags", arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), 8)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"tags"`}},
		{"dictionary of values the column cannot take", []arrow.Field{id, fld("ts", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}, 4)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"ts"`, "dictionary"}},
		{"view input", []arrow.Field{id, fld("name", arrow.BinaryTypes.StringView, 2)}, orders, nil, 0,
			ErrIncompatibleType, []string{`"name"`, "string_view"}},
		{"unknown rejected", []arrow.Field{id, fld("zzz", arrow.PrimitiveTypes.Int64, -1), fld("aaa", arrow.PrimitiveTypes.Int64, 99)}, orders, nil, RejectUnknown,
			ErrUnknownField, []string{`"aaa", "zzz"`}},
		{"nested unknown rejected", []arrow.Field{id, fld("addr", arrow.StructOf(req(fld("city", arrow.BinaryTypes.String, 6)), fld("more", arrow.BinaryTypes.String, -1)), 5)}, orders, nil, RejectUnknown,
			ErrUnknownField, []string{`"addr.more"`}},
		{"old and new name both given", []arrow.Field{id, fld("name", arrow.BinaryTypes.String, -1), fld("customer", arrow.BinaryTypes.String, -1)}, renamed, renamedMapping, 0,
			ErrAmbiguousField, []string{`"name"`, `"customer"`}},
		{"duplicate id", []arrow.Field{id, fld("id2", arrow.PrimitiveTypes.Int64, 1)}, orders, nil, 0,
			ErrAmbiguousField, []string{`"id"`, `"id2"`}},
		{"bad field id", []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{table.ArrowParquetFieldIDKey}, []string{"x"})}}, orders, nil, 0,
			nil, []string{`"id"`, `"x"`}},
		{"bad policy", []arrow.Field{id}, orders, nil, UnknownPolicy(7),
			nil, []string{"UnknownPolicy(7)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := arrow.NewSchema(tt.in, nil)
			r, err := Resolve(in, tt.tbl, tt.nm, tt.policy)
			if err == nil {
				t.Fatalf("Resolve(%s) = %v, nil, want error", in, r)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Resolve(%s) = %v, want %v", in, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "schema: ") {
				t.Errorf("Resolve(%s) = %q, want prefix %q", in, err, "schema: ")
			}
			t.Logf("%s", err)
			for _, m := range tt.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Resolve(%s) = %q, want it to contain %s", in, err, m)
				}
			}
		})
	}
}

func TestResolveNil(t *testing.T) {
	if _, err := Resolve(nil, orders, nil, IgnoreUnknown); err == nil {
		t.Errorf("Resolve(nil, orders) = nil error, want error")
	}
	if _, err := Resolve(arrow.NewSchema(nil, nil), nil, nil, IgnoreUnknown); err == nil {
		t.Errorf("Resolve(empty, nil) = nil error, want error")
	}
}
