package partition_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// sumSchema has a source column of every type MayHold is tested on.
var sumSchema = catalogtest.PrimitiveSchema

// sumFields are the partition fields of the MayHold tests by name.
var sumFields = map[string]struct {
	source int
	tr     iceberg.Transform
}{
	"b": {1, iceberg.IdentityTransform{}}, "i": {2, iceberg.IdentityTransform{}},
	"l": {3, iceberg.IdentityTransform{}}, "f": {4, iceberg.IdentityTransform{}},
	"d": {5, iceberg.IdentityTransform{}}, "dec": {6, iceberg.IdentityTransform{}},
	"dt": {7, iceberg.IdentityTransform{}}, "t": {8, iceberg.IdentityTransform{}},
	"ts": {9, iceberg.IdentityTransform{}}, "tstz": {10, iceberg.IdentityTransform{}},
	"tsns": {11, iceberg.IdentityTransform{}}, "s": {12, iceberg.IdentityTransform{}},
	"u": {13, iceberg.IdentityTransform{}}, "bin": {14, iceberg.IdentityTransform{}},
	"fx":       {15, iceberg.IdentityTransform{}},
	"ts_year":  {9, iceberg.YearTransform{}},
	"ts_month": {9, iceberg.MonthTransform{}},
	"ts_day":   {9, iceberg.DayTransform{}},
	"ts_hour":  {9, iceberg.HourTransform{}},
	"tstz_day": {10, iceberg.DayTransform{}},
	"dt_day":   {7, iceberg.DayTransform{}},
	"s_bucket": {12, iceberg.BucketTransform{NumBuckets: 16}},
	"l_bucket": {3, iceberg.BucketTransform{NumBuckets: 8}},
	"s_trunc":  {12, iceberg.TruncateTransform{Width: 3}},
	"i_trunc":  {2, iceberg.TruncateTransform{Width: 10}},
	"v":        {12, iceberg.VoidTransform{}},
}

// sumSpec is the iceberg spec id of the partition fields named, field ids
// from 1000 in order.
func sumSpec(id int, names ...string) iceberg.PartitionSpec {
	var pfs []iceberg.PartitionField
	for i, n := range names {
		f, ok := sumFields[n]
		if !ok {
			panic("no test field " + n)
		}
		pfs = append(pfs, iceberg.PartitionField{SourceIDs: []int{f.source}, FieldID: 1000 + i, Name: n, Transform: f.tr})
	}

	return iceberg.NewPartitionSpecID(id, pfs...)
}

func compileSpec(t testing.TB, spec iceberg.PartitionSpec) *partition.Spec {
	t.Helper()
	s, err := partition.NewSpec(spec, sumSchema)
	if err != nil {
		t.Fatalf("NewSpec(%v) = %v", spec, err)
	}

	return s
}

// keyOf is the key of s with vals in field order; nil is null.
func keyOf(t testing.TB, s *partition.Spec, spec iceberg.PartitionSpec, vals ...any) partition.Key {
	t.Helper()
	m := make(map[int]any, len(vals))
	for i, v := range vals {
		m[spec.Field(i).FieldID] = v
	}
	k, err := s.KeyFromValues(m)
	if err != nil {
		t.Fatalf("KeyFromValues(%v) = %v", m, err)
	}

	return k
}

// lit is the iceberg literal of a partition value in its Go form.
func lit(v any) iceberg.Literal {
	switch v := v.(type) {
	case bool:
		return iceberg.NewLiteral(v)
	case int32:
		return iceberg.NewLiteral(v)
	case int64:
		return iceberg.NewLiteral(v)
	case float32:
		return iceberg.NewLiteral(v)
	case float64:
		return iceberg.NewLiteral(v)
	case iceberg.Decimal:
		return iceberg.NewLiteral(v)
	case iceberg.Date:
		return iceberg.NewLiteral(v)
	case iceberg.Time:
		return iceberg.NewLiteral(v)
	case iceberg.Timestamp:
		return iceberg.NewLiteral(v)
	case iceberg.TimestampNano:
		return iceberg.NewLiteral(v)
	case string:
		return iceberg.NewLiteral(v)
	case uuid.UUID:
		return iceberg.NewLiteral(v)
	case []byte:
		return iceberg.NewLiteral(v)
	}
	panic(fmt.Sprintf("no literal for %T", v))
}

// bin is the single-value serialisation of v; nil for nil.
func bin(v any) *[]byte {
	if v == nil {
		return nil
	}
	b, err := lit(v).MarshalBinary()
	if err != nil {
		panic(err)
	}

	return &b
}

func ptr[T any](v T) *T { return &v }

// sum is a field summary with bounds lo and hi (nil: absent), null for
// ContainsNull and ContainsNaN false.
func sum(lo, hi any, null bool) iceberg.FieldSummary {
	return iceberg.FieldSummary{ContainsNull: null, ContainsNaN: ptr(false), LowerBound: bin(lo), UpperBound: bin(hi)}
}

func dec(unscaled int64) iceberg.Decimal {
	return iceberg.Decimal{Val: decimal128.FromI64(unscaled), Scale: 2}
}

const usPerDay = int64(86_400_000_000)

// day0 is 2026-07-14 as a day number.
const day0 = 20648

// rangeCase is a field whose manifest holds values from lo to hi, with a
// value mid between them and values below and above them.
type rangeCase struct {
	field                  string
	below, lo, mid, hi, up any
}

var rangeCases = []rangeCase{
	{"i", int32(4), int32(5), int32(7), int32(9), int32(10)},
	{"i", int32(-6), int32(-5), int32(-1), int32(5), int32(6)},
	{"i", int32(math.MinInt32), int32(math.MinInt32 + 1), int32(0), int32(math.MaxInt32 - 1), int32(math.MaxInt32)},
	{"l", int64(-1<<40 - 1), int64(-1 << 40), int64(0), int64(1 << 40), int64(1<<40 + 1)},
	{"l", int64(math.MinInt64), int64(math.MinInt64 + 1), int64(-1), int64(math.MaxInt64 - 1), int64(math.MaxInt64)},
	{"f", float32(-1.75), float32(-1.5), float32(0), float32(2.5), float32(2.75)},
	{"f", float32(math.Inf(-1)), float32(-math.MaxFloat32), float32(1), float32(math.MaxFloat32), float32(math.Inf(1))},
	{"d", -1e301, -1e300, 1.0, 1e300, math.Inf(1)},
	{"d", -0.5, -0.25, 0.0, 0.25, 0.5},
	{"dec", dec(-101), dec(-100), dec(125), dec(1000), dec(1001)},
	{"dec", dec(-999_999_999), dec(-999_999_998), dec(0), dec(999_999_998), dec(999_999_999)},
	{"dt", iceberg.Date(day0 - 8), iceberg.Date(day0 - 7), iceberg.Date(day0), iceberg.Date(day0 + 7), iceberg.Date(day0 + 8)},
	{"dt", iceberg.Date(-2), iceberg.Date(-1), iceberg.Date(0), iceberg.Date(1), iceberg.Date(2)},
	{"t", iceberg.Time(0), iceberg.Time(1), iceberg.Time(3_600_000_000), iceberg.Time(usPerDay - 2), iceberg.Time(usPerDay - 1)},
	{"ts", iceberg.Timestamp(day0*usPerDay - 1), iceberg.Timestamp(day0 * usPerDay), iceberg.Timestamp(day0*usPerDay + 3_600_000_000), iceberg.Timestamp((day0+1)*usPerDay - 1), iceberg.Timestamp((day0 + 1) * usPerDay)},
	{"tstz", iceberg.Timestamp(-usPerDay - 1), iceberg.Timestamp(-usPerDay), iceberg.Timestamp(0), iceberg.Timestamp(usPerDay), iceberg.Timestamp(usPerDay + 1)},
	{"tsns", iceberg.TimestampNano(day0*usPerDay*1000 - 1), iceberg.TimestampNano(day0 * usPerDay * 1000), iceberg.TimestampNano(day0*usPerDay*1000 + 1), iceberg.TimestampNano(day0*usPerDay*1000 + 2), iceberg.TimestampNano(day0*usPerDay*1000 + 3)},
	{"s", "az", "b", "bz", "d", "da"},
	{"s", "", "a", "a\u00ff", "b", "b\x00"},
	{"s", "z", "\u00e9", "\uffff", "\U0001F600", "\U0001F601"}, // bytewise (code point) order, not UTF-16 order
	{"u", uuid.MustParse("0fffffff-ffff-ffff-ffff-ffffffffffff"), uuid.MustParse("10000000-0000-0000-0000-000000000000"),
		uuid.MustParse("20000000-0000-0000-0000-000000000000"), uuid.MustParse("30000000-0000-0000-0000-000000000000"),
		uuid.MustParse("30000000-0000-0000-0000-000000000001")},
	{"u", uuid.MustParse("7fffffff-ffff-ffff-ffff-ffffffffffff"), uuid.MustParse("80000000-0000-0000-0000-000000000000"),
		uuid.MustParse("c0000000-0000-0000-0000-000000000000"), uuid.MustParse("f0000000-0000-0000-0000-000000000000"),
		uuid.MustParse("f0000000-0000-0000-0000-000000000001")},
	{"bin", []byte{0x00, 0xff}, []byte{0x01}, []byte{0x01, 0x00}, []byte{0x02}, []byte{0x02, 0x00}},
	{"bin", []byte{}, []byte{0x00}, []byte{0x80}, []byte{0xff}, []byte{0xff, 0x00}},
	{"fx", []byte{0, 0, 0, 9}, []byte{0, 0, 0, 10}, []byte{0x7f, 0, 0, 0}, []byte{0x80, 0, 0, 0}, []byte{0x80, 0, 0, 1}},
	{"ts_year", int32(55), int32(56), int32(57), int32(58), int32(59)},
	{"ts_year", int32(-2), int32(-1), int32(0), int32(1), int32(2)},
	{"ts_month", int32(677), int32(678), int32(680), int32(689), int32(690)},
	{"ts_day", iceberg.Date(day0 - 1), iceberg.Date(day0), iceberg.Date(day0 + 1), iceberg.Date(day0 + 2), iceberg.Date(day0 + 3)},
	{"ts_day", iceberg.Date(-1), iceberg.Date(0), iceberg.Date(day0), iceberg.Date(2 * day0), iceberg.Date(2*day0 + 1)},
	{"tstz_day", iceberg.Date(-10), iceberg.Date(-9), iceberg.Date(-5), iceberg.Date(-1), iceberg.Date(0)},
	{"dt_day", iceberg.Date(day0 - 31), iceberg.Date(day0 - 30), iceberg.Date(day0), iceberg.Date(day0 + 30), iceberg.Date(day0 + 31)},
	{"ts_hour", int32(day0*24 - 1), int32(day0 * 24), int32(day0*24 + 10), int32(day0*24 + 23), int32(day0*24 + 24)},
	{"s_bucket", int32(0), int32(1), int32(7), int32(14), int32(15)},
	{"l_bucket", int32(2), int32(3), int32(3), int32(3), int32(4)},
	{"s_trunc", "abb", "abc", "b", "xyz", "xz"},
	{"i_trunc", int32(-10), int32(0), int32(50), int32(100), int32(110)},
}

// TestMayHoldRange checks, for every transform and type, a value against a
// manifest holding values from lo to hi: inside, on the bounds, outside,
// null, and summaries MayHold cannot read.
func TestMayHoldRange(t *testing.T) {
	type tc struct {
		name string
		key  any
		sums []iceberg.FieldSummary
		want bool
	}
	n := 0
	for _, rc := range rangeCases {
		spec := sumSpec(0, rc.field)
		s := compileSpec(t, spec)
		result := spec.Field(0).Transform.ResultType(mustType(t, spec.Field(0).SourceID()))
		one := func(fs iceberg.FieldSummary) []iceberg.FieldSummary { return []iceberg.FieldSummary{fs} }
		cases := []tc{
			{"mid", rc.mid, one(sum(rc.lo, rc.hi, false)), true},
			{"lower", rc.lo, one(sum(rc.lo, rc.hi, false)), true},
			{"upper", rc.hi, one(sum(rc.lo, rc.hi, false)), true},
			{"below", rc.below, one(sum(rc.lo, rc.hi, false)), false},
			{"above", rc.up, one(sum(rc.lo, rc.hi, true)), false},
			{"point", rc.mid, one(sum(rc.mid, rc.mid, false)), true},
			{"below point", rc.lo, one(sum(rc.hi, rc.hi, false)), cmpEqual(rc.lo, rc.hi)},
			{"null, no null", nil, one(sum(rc.lo, rc.hi, false)), false},
			{"null, null", nil, one(sum(rc.lo, rc.hi, true)), true},
			{"null, only nulls", nil, one(sum(nil, nil, true)), true},
			{"no bounds", rc.below, one(sum(nil, nil, false)), true},
			{"no lower bound", rc.below, one(sum(nil, rc.hi, false)), true},
			{"no upper bound", rc.up, one(sum(rc.lo, nil, false)), true},
			{"nil ContainsNaN", rc.up, one(iceberg.FieldSummary{LowerBound: bin(rc.lo), UpperBound: bin(rc.hi)}), false},
			{"no summaries", rc.below, nil, true},
			{"too many summaries", rc.below, []iceberg.FieldSummary{sum(rc.lo, rc.hi, false), sum(rc.lo, rc.hi, false)}, true},
		}
		for _, bad := range [][]byte{{}, {1, 2, 3}, make([]byte, 17)} {
			if _, err := iceberg.LiteralFromBytes(result, bad); err == nil {
				continue // decodes as some value of the type: not undecodable
			}
			good := bin(rc.lo)
			cases = append(cases,
				tc{fmt.Sprintf("undecodable lower %x", bad), rc.below, one(iceberg.FieldSummary{LowerBound: &bad, UpperBound: good}), true},
				tc{fmt.Sprintf("undecodable upper %x", bad), rc.up, one(iceberg.FieldSummary{LowerBound: good, UpperBound: &bad}), true})
		}
		for _, c := range cases {
			k := keyOf(t, s, spec, c.key)
			if got := s.MayHold(k, c.sums); got != c.want {
				t.Errorf("%s %s: MayHold(%s, [%v, %v]) = %v, want %v", rc.field, c.name, k, rc.lo, rc.hi, got, c.want)
			}
			n++
		}
	}
	t.Logf("%d cases", n)
}

func mustType(t testing.TB, id int) iceberg.Type {
	t.Helper()
	typ, ok := sumSchema.FindTypeByID(id)
	if !ok {
		t.Fatalf("no column %d", id)
	}

	return typ
}

// cmpEqual reports whether two values of the same type print the same.
func cmpEqual(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestMayHoldCases covers what the range cases do not: bool, NaN and signed
// zero, several fields, void fields, keys of other specs, and bounds
// written by other writers.
func TestMayHoldCases(t *testing.T) {
	nan32, nan64 := float32(math.NaN()), math.NaN()
	nanSum := func(lo, hi any, nan *bool) iceberg.FieldSummary {
		fs := sum(lo, hi, false)
		fs.ContainsNaN = nan

		return fs
	}
	// javaUUID is a manifest whose bounds are in java.util.UUID order (two
	// signed longs), as Java Iceberg wrote them before apache/iceberg#14500:
	// it holds 00..01 and 80..00, and the signed order puts 80..00 first.
	lowU, highU := uuid.MustParse("80000000-0000-0000-0000-000000000000"), uuid.MustParse("00000000-0000-0000-0000-000000000001")
	javaUUID := sum(lowU, highU, false)
	day := iceberg.Date(day0)
	cases := []struct {
		name   string
		fields []string
		key    []any
		sums   []iceberg.FieldSummary
		want   bool
	}{
		{"bool false in [false,false]", []string{"b"}, []any{false}, []iceberg.FieldSummary{sum(false, false, false)}, true},
		{"bool true in [false,false]", []string{"b"}, []any{true}, []iceberg.FieldSummary{sum(false, false, false)}, false},
		{"bool false in [true,true]", []string{"b"}, []any{false}, []iceberg.FieldSummary{sum(true, true, false)}, false},
		{"bool true in [true,true]", []string{"b"}, []any{true}, []iceberg.FieldSummary{sum(true, true, false)}, true},
		{"bool false in [false,true]", []string{"b"}, []any{false}, []iceberg.FieldSummary{sum(false, true, false)}, true},
		{"bool true in [false,true]", []string{"b"}, []any{true}, []iceberg.FieldSummary{sum(false, true, false)}, true},
		{"bool null in [false,true]", []string{"b"}, []any{nil}, []iceberg.FieldSummary{sum(false, true, false)}, false},

		{"float NaN, ContainsNaN", []string{"f"}, []any{nan32}, []iceberg.FieldSummary{nanSum(float32(1), float32(2), ptr(true))}, true},
		{"float NaN, no NaN", []string{"f"}, []any{nan32}, []iceberg.FieldSummary{nanSum(float32(1), float32(2), ptr(false))}, false},
		{"float NaN, ContainsNaN unknown", []string{"f"}, []any{nan32}, []iceberg.FieldSummary{nanSum(float32(1), float32(2), nil)}, true},
		{"float NaN, only NaN", []string{"f"}, []any{nan32}, []iceberg.FieldSummary{nanSum(nil, nil, ptr(true))}, true},
		{"float above, ContainsNaN", []string{"f"}, []any{float32(3)}, []iceberg.FieldSummary{nanSum(float32(1), float32(2), ptr(true))}, false},
		{"double NaN, ContainsNaN", []string{"d"}, []any{nan64}, []iceberg.FieldSummary{nanSum(1.0, 2.0, ptr(true))}, true},
		{"double NaN, no NaN", []string{"d"}, []any{nan64}, []iceberg.FieldSummary{nanSum(1.0, 2.0, ptr(false))}, false},
		{"double NaN, ContainsNaN unknown", []string{"d"}, []any{nan64}, []iceberg.FieldSummary{nanSum(1.0, 2.0, nil)}, true},
		{"double below, ContainsNaN", []string{"d"}, []any{0.5}, []iceberg.FieldSummary{nanSum(1.0, 2.0, ptr(true))}, false},
		{"double null, ContainsNaN", []string{"d"}, []any{nil}, []iceberg.FieldSummary{nanSum(1.0, 2.0, ptr(true))}, false},
		// Legacy writers ordered NaN above every number and put it in the
		// upper bound (or below, in the lower): such bounds prove nothing.
		{"double in [1, NaN]", []string{"d"}, []any{5.0}, []iceberg.FieldSummary{nanSum(1.0, nan64, nil)}, true},
		{"double in [NaN, NaN]", []string{"d"}, []any{5.0}, []iceberg.FieldSummary{nanSum(nan64, nan64, nil)}, true},
		{"float in [NaN, 9]", []string{"f"}, []any{float32(5)}, []iceberg.FieldSummary{nanSum(nan32, float32(9), nil)}, true},
		// iceberg-go's writer orders -0 and +0 as equal: a manifest of
		// files +0 then -0 has bounds [+0, +0] and holds -0.
		{"double -0 in [+0, +0]", []string{"d"}, []any{math.Copysign(0, -1)}, []iceberg.FieldSummary{sum(0.0, 0.0, false)}, true},
		{"double +0 in [-0, -0]", []string{"d"}, []any{0.0}, []iceberg.FieldSummary{sum(math.Copysign(0, -1), math.Copysign(0, -1), false)}, true},
		{"float -0 in [+0, +0]", []string{"f"}, []any{float32(math.Copysign(0, -1))}, []iceberg.FieldSummary{sum(float32(0), float32(0), false)}, true},

		{"uuid in java-ordered bounds, high", []string{"u"}, []any{highU}, []iceberg.FieldSummary{javaUUID}, true},
		{"uuid in java-ordered bounds, low", []string{"u"}, []any{lowU}, []iceberg.FieldSummary{javaUUID}, true},
		{"uuid in java-ordered bounds, between", []string{"u"}, []any{uuid.MustParse("f0000000-0000-0000-0000-000000000000")}, []iceberg.FieldSummary{javaUUID}, true},
		{"uuid outside java-ordered bounds", []string{"u"}, []any{uuid.MustParse("40000000-0000-0000-0000-000000000000")}, []iceberg.FieldSummary{javaUUID}, false},
		{"uuid outside both orders", []string{"u"}, []any{uuid.MustParse("40000000-0000-0000-0000-000000000000")},
			[]iceberg.FieldSummary{sum(uuid.MustParse("10000000-0000-0000-0000-000000000000"), uuid.MustParse("20000000-0000-0000-0000-000000000000"), false)}, false},
		// In the signed order, 0xC0.. (negative) is below 0x10..; in the
		// unsigned one, above 0x20..: outside either way.
		{"uuid negative long outside", []string{"u"}, []any{uuid.MustParse("c0000000-0000-0000-0000-000000000000")},
			[]iceberg.FieldSummary{sum(uuid.MustParse("10000000-0000-0000-0000-000000000000"), uuid.MustParse("20000000-0000-0000-0000-000000000000"), false)}, false},

		{"decimal bounds are unscaled: 0.01 to 0.02", []string{"dec"}, []any{dec(100_000)},
			[]iceberg.FieldSummary{sum(iceberg.Decimal{Val: decimal128.FromI64(1), Scale: 0}, iceberg.Decimal{Val: decimal128.FromI64(2), Scale: 0}, false)}, false},
		{"fixed bound shorter than fixed[4]", []string{"fx"}, []any{[]byte{9, 9, 9, 9}}, []iceberg.FieldSummary{sum([]byte{1}, []byte{2}, false)}, true},

		{"multi inside", []string{"ts_day", "s", "s_bucket"}, []any{day, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false), sum(int32(0), int32(15), false)}, true},
		{"multi on bounds", []string{"ts_day", "s", "s_bucket"}, []any{day, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day, day, false), sum("eu", "eu", false), sum(int32(3), int32(3), false)}, true},
		{"multi first outside", []string{"ts_day", "s", "s_bucket"}, []any{day + 2, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false), sum(int32(0), int32(15), false)}, false},
		{"multi second outside", []string{"ts_day", "s", "s_bucket"}, []any{day, "zz", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false), sum(int32(0), int32(15), false)}, false},
		{"multi last outside", []string{"ts_day", "s", "s_bucket"}, []any{day, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false), sum(int32(4), int32(15), false)}, false},
		{"multi null without null", []string{"ts_day", "s", "s_bucket"}, []any{day, nil, int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false), sum(int32(0), int32(15), false)}, false},
		{"multi null with null", []string{"ts_day", "s", "s_bucket"}, []any{day, nil, int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", true), sum(int32(0), int32(15), false)}, true},
		{"multi outside, other unreadable", []string{"ts_day", "s", "s_bucket"}, []any{day + 2, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), {}, sum(int32(0), int32(15), false)}, false},
		{"multi too few summaries", []string{"ts_day", "s", "s_bucket"}, []any{day + 2, "eu", int32(3)},
			[]iceberg.FieldSummary{sum(day-1, day+1, false), sum("ap", "us", false)}, true},

		{"void", []string{"v"}, []any{nil}, []iceberg.FieldSummary{sum(nil, nil, false)}, true},
		{"void with bounds", []string{"v"}, []any{nil}, []iceberg.FieldSummary{sum("a", "b", false)}, true},
		{"void then day inside", []string{"v", "ts_day"}, []any{nil, day}, []iceberg.FieldSummary{sum(nil, nil, false), sum(day, day, false)}, true},
		{"void then day outside", []string{"v", "ts_day"}, []any{nil, day}, []iceberg.FieldSummary{sum(nil, nil, false), sum(day+1, day+1, false)}, false},
		{"no fields", nil, nil, nil, true},
	}
	for _, c := range cases {
		spec := sumSpec(0, c.fields...)
		s := compileSpec(t, spec)
		k := keyOf(t, s, spec, c.key...)
		if got := s.MayHold(k, c.sums); got != c.want {
			t.Errorf("%s: MayHold(%s, %d summaries) = %v, want %v", c.name, k, len(c.sums), got, c.want)
		}
	}
	t.Logf("%d cases", len(cases))
}

// TestMayHoldOtherKeys checks that a key MayHold cannot judge, of another
// spec or invalid, gives true.
func TestMayHoldOtherKeys(t *testing.T) {
	spec0, spec1 := sumSpec(0, "ts_day"), sumSpec(1, "ts_day")
	s0, s1 := compileSpec(t, spec0), compileSpec(t, spec1)
	outside := []iceberg.FieldSummary{sum(iceberg.Date(day0+1), iceberg.Date(day0+1), false)}
	k0, k1 := keyOf(t, s0, spec0, iceberg.Date(day0)), keyOf(t, s1, spec1, iceberg.Date(day0))
	if s0.MayHold(k0, outside) {
		t.Fatalf("MayHold(%s, outside) = true, want false", k0)
	}
	if got := s0.MayHold(k1, outside); !got {
		t.Errorf("spec 0: MayHold(%s of spec 1, outside) = false, want true", k1)
	}
	if got := s0.MayHold(partition.Key{}, outside); !got {
		t.Errorf("MayHold(zero key, outside) = false, want true")
	}
}

// TestMayHoldManifests checks MayHold against the manifests iceberg-go
// writes: every entry's key may be held by its manifest, and keys past the
// manifest's bounds are not.
func TestMayHoldManifests(t *testing.T) {
	ctx := context.Background()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
		iceberg.NestedField{ID: 3, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1001, Name: "region", Transform: iceberg.IdentityTransform{}},
	)
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "events", sch, spec, nil)
	w, err := table.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		day    int
		region *string
	}
	eu, us, ap := ptr("eu"), ptr("us"), ptr("ap")
	write := func(key string, rows ...row) {
		t.Helper()
		rdr := catalogtest.Reader([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64},
			{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
			{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		}, len(rows), func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(rows[i].day)*usPerDay + int64(i)*1_000_000))
			if r := rows[i].region; r != nil {
				b.Field(2).(*array.StringBuilder).Append(*r)
			} else {
				b.Field(2).AppendNull()
			}
		})
		defer rdr.Release()
		if key == "" {
			_, err = w.ReplacePartitions(ctx, rdr)
		} else {
			var k partition.Key
			if k, err = w.Key(key); err == nil {
				_, err = w.ReplacePartition(ctx, k, rdr)
			}
		}
		if err != nil {
			t.Fatalf("replace %q: %v", key, err)
		}
	}
	// One commit of many partitions, then single partitions in their own
	// commits, some replacing what the first wrote.
	write("", row{day0, eu}, row{day0, us}, row{day0 + 1, nil}, row{day0 + 2, ap}, row{day0 + 3, eu}, row{day0 + 3, nil})
	write("ts_day=2026-07-20/region=us", row{day0 + 6, us}, row{day0 + 6, us})
	write("ts_day=2026-07-15/region=null", row{day0 + 1, nil})
	write("ts_day=2026-07-10/region=eu", row{day0 - 4, eu})
	write("", row{day0 + 2, ap}, row{day0 + 9, ap}, row{day0 + 9, nil})

	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var entries, outside int
	nulls := false
	for _, mf := range mfs {
		if mf.ManifestContent() != iceberg.ManifestContentData || int(mf.PartitionSpecID()) != s.ID() {
			t.Fatalf("manifest %s: content %v spec %d, want data of spec %d", mf.FilePath(), mf.ManifestContent(), mf.PartitionSpecID(), s.ID())
		}
		sums := mf.Partitions()
		es, err := mf.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			k, err := s.KeyFromValues(e.DataFile().Partition())
			if err != nil {
				t.Fatal(err)
			}
			if !s.MayHold(k, sums) {
				t.Errorf("manifest %s (%s) lists %s (status %v), MayHold = false, want true", mf.FilePath(), fmtSums(sums), k, e.Status())
			}
			entries++
			nulls = nulls || e.DataFile().Partition()[1001] == nil
			// The same region on a day past either bound cannot be there.
			lo, hi := dateBound(t, sums[0].LowerBound), dateBound(t, sums[0].UpperBound)
			for _, d := range []iceberg.Date{lo - 1, hi + 1, lo - 400, hi + 400} {
				k := keyOf(t, s, tbl.Spec(), d, e.DataFile().Partition()[1001])
				if s.MayHold(k, sums) {
					t.Errorf("manifest %s (%s): MayHold(%s) = true, want false", mf.FilePath(), fmtSums(sums), k)
				}
				outside++
			}
		}
		// A region past the upper bound, and null where there is none.
		if ub := sums[1].UpperBound; ub != nil {
			k := keyOf(t, s, tbl.Spec(), dateBound(t, sums[0].LowerBound), string(*ub)+"z")
			if s.MayHold(k, sums) {
				t.Errorf("manifest %s (%s): MayHold(%s) = true, want false", mf.FilePath(), fmtSums(sums), k)
			}
			outside++
		}
		if !sums[1].ContainsNull {
			k := keyOf(t, s, tbl.Spec(), dateBound(t, sums[0].LowerBound), nil)
			if s.MayHold(k, sums) {
				t.Errorf("manifest %s (%s): MayHold(%s) = true, want false", mf.FilePath(), fmtSums(sums), k)
			}
			outside++
		}
	}
	if len(mfs) < 3 || entries != 10 || !nulls {
		t.Fatalf("%d manifests, %d entries, null region %v: want 3 or more manifests, 10 live files and a null region", len(mfs), entries, nulls)
	}
	t.Logf("%d manifests, %d entries, %d keys outside", len(mfs), entries, outside)
}

func dateBound(t *testing.T, b *[]byte) iceberg.Date {
	t.Helper()
	if b == nil {
		t.Fatal("manifest without a day bound")
	}
	l, err := iceberg.LiteralFromBytes(iceberg.PrimitiveTypes.Date, *b)
	if err != nil {
		t.Fatal(err)
	}

	return l.(iceberg.DateLiteral).Value()
}

func fmtSums(sums []iceberg.FieldSummary) string {
	var out []string
	for _, fs := range sums {
		lo, hi := "-", "-"
		if fs.LowerBound != nil {
			lo = fmt.Sprintf("%x", *fs.LowerBound)
		}
		if fs.UpperBound != nil {
			hi = fmt.Sprintf("%x", *fs.UpperBound)
		}
		out = append(out, fmt.Sprintf("[%s,%s null=%v]", lo, hi, fs.ContainsNull))
	}

	return fmt.Sprint(out)
}

// FuzzMayHold builds the summary of a manifest of fuzzed values, some null,
// the way a writer does (min, max, contains-null), and checks MayHold for a
// fuzzed key against the set: a held key gives true, a non-null key outside
// [min, max] false, a null key whether there is a null.
func FuzzMayHold(f *testing.F) {
	f.Add(false, []byte{}, uint8(0), int64(0), false)
	f.Add(false, []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 0, 0, 0, 0, 0}, uint8(1), int64(5), false)
	f.Add(true, []byte{0, 0, 0x10, 0, 0, 0, 0, 0, 0, 1}, uint8(9), int64(-3), true)
	f.Add(true, []byte{2, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint8(0), int64(math.MinInt64), false)
	specs := []iceberg.PartitionSpec{sumSpec(0, "l"), sumSpec(0, "ts_day")}
	compiled := []*partition.Spec{compileSpec(f, specs[0]), compileSpec(f, specs[1])}
	const days = 700_000 // keep day numbers within years 0000-9999
	f.Fuzz(func(t *testing.T, byDay bool, raw []byte, pick uint8, keyVal int64, keyNull bool) {
		which := 0
		if byDay {
			which = 1
		}
		s, spec := compiled[which], specs[which]
		// part is the partition value of a fuzzed source value.
		part := func(v int64) int64 {
			if !byDay {
				return v
			}
			ts := (v%days)*usPerDay + (v/days)%usPerDay // a timestamp within a day of day v%days
			d := ts / usPerDay
			if ts%usPerDay < 0 {
				d-- // floor, as the day transform rounds
			}

			return d
		}
		var vals []*int64
		for len(raw) >= 9 {
			if raw[0]%3 == 0 {
				vals = append(vals, nil)
			} else {
				v := part(int64(binary.LittleEndian.Uint64(raw[1:9])))
				vals = append(vals, &v)
			}
			raw = raw[9:]
		}
		var nonNull []int64
		containsNull := false
		for _, v := range vals {
			if v == nil {
				containsNull = true
			} else {
				nonNull = append(nonNull, *v)
			}
		}
		fs := iceberg.FieldSummary{ContainsNull: containsNull, ContainsNaN: ptr(false)}
		typed := func(v int64) any {
			if byDay {
				return iceberg.Date(v)
			}

			return v
		}
		if len(nonNull) > 0 {
			fs.LowerBound, fs.UpperBound = bin(typed(slices.Min(nonNull))), bin(typed(slices.Max(nonNull)))
		}
		// The key: one of the values when pick says so, else keyVal.
		var key *int64
		switch {
		case int(pick) < len(vals):
			key = vals[pick]
		case !keyNull:
			v := part(keyVal)
			key = &v
		}
		var k partition.Key
		if key == nil {
			k = keyOf(t, s, spec, nil)
		} else {
			k = keyOf(t, s, spec, typed(*key))
		}
		got := s.MayHold(k, []iceberg.FieldSummary{fs})
		switch {
		case key == nil:
			if got != containsNull {
				t.Fatalf("MayHold(%s, %s) = %v, want %v (contains null)", k, fmtSums([]iceberg.FieldSummary{fs}), got, containsNull)
			}
		case slices.Contains(nonNull, *key):
			if !got {
				t.Fatalf("MayHold(%s, %s) = false for a held key, want true", k, fmtSums([]iceberg.FieldSummary{fs}))
			}
		case len(nonNull) > 0:
			want := *key >= slices.Min(nonNull) && *key <= slices.Max(nonNull)
			if got != want {
				t.Fatalf("MayHold(%s, %s) = %v, want %v (in [min, max])", k, fmtSums([]iceberg.FieldSummary{fs}), got, want)
			}
		}
	})
}

// TestSummaries checks the field summaries of manifests listing the
// values, against the spec's field_summary rules as Java writes them.
func TestSummaries(t *testing.T) {
	negZero := math.Copysign(0, -1)
	nan := math.NaN()
	empty := ptr([]byte{})
	withNaN := func(s iceberg.FieldSummary) iceberg.FieldSummary { s.ContainsNaN = ptr(true); return s }
	for _, tc := range []struct {
		name  string
		field string
		vals  []any
		want  iceberg.FieldSummary
	}{
		{"empty string is a zero-length bound", "s", []any{"k1", "", nil}, iceberg.FieldSummary{ContainsNull: true, ContainsNaN: ptr(false), LowerBound: empty, UpperBound: bin("k1")}},
		{"only the empty string", "s", []any{""}, iceberg.FieldSummary{ContainsNaN: ptr(false), LowerBound: empty, UpperBound: empty}},
		{"empty binary", "bin", []any{[]byte{2}, []byte(nil), []byte{}}, iceberg.FieldSummary{ContainsNaN: ptr(false), LowerBound: empty, UpperBound: bin([]byte{2})}},
		{"+0 then -0", "d", []any{0.0, negZero}, sum(negZero, 0.0, false)},
		{"-0 then +0", "d", []any{negZero, 0.0}, sum(negZero, 0.0, false)},
		{"only -0", "d", []any{negZero}, sum(negZero, negZero, false)},
		{"NaN is no bound", "d", []any{nan, 2.5, -1.0}, withNaN(sum(-1.0, 2.5, false))},
		{"only NaN", "d", []any{nan, nil}, withNaN(sum(nil, nil, true))},
		{"float zeros", "f", []any{float32(0), float32(negZero), float32(nan)}, withNaN(sum(float32(negZero), float32(0), false))},
		{"decimal", "dec", []any{dec(-5), dec(1234)}, sum(dec(-5), dec(1234), false)},
		{"day", "ts_day", []any{iceberg.Date(day0 + 1), iceberg.Date(day0)}, sum(iceberg.Date(day0), iceberg.Date(day0+1), false)},
		{"bool", "b", []any{true, false}, sum(false, true, false)},
		{"uuid", "u", []any{uuid.Max, uuid.Nil}, sum(uuid.Nil, uuid.Max, false)},
		{"only nulls", "l", []any{nil, nil}, sum(nil, nil, true)},
		{"void", "v", []any{nil}, sum(nil, nil, true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sumSpec(0, tc.field)
			s := compileSpec(t, spec)
			parts := make([]map[int]any, len(tc.vals))
			for i, v := range tc.vals {
				parts[i] = map[int]any{1000: v}
			}
			got, err := s.Summaries(parts)
			if err != nil {
				t.Fatalf("Summaries(%v) = %v", tc.vals, err)
			}
			if len(got) != 1 || fmtSums(got) != fmtSums([]iceberg.FieldSummary{tc.want}) {
				t.Fatalf("Summaries(%v) = %s, want %s", tc.vals, fmtSums(got), fmtSums([]iceberg.FieldSummary{tc.want}))
			}
			if got[0].ContainsNaN == nil || *got[0].ContainsNaN != *tc.want.ContainsNaN {
				t.Errorf("Summaries(%v): contains_nan %v, want %v", tc.vals, got[0].ContainsNaN, *tc.want.ContainsNaN)
			}
			for _, b := range []*[]byte{got[0].LowerBound, got[0].UpperBound} {
				if b != nil && *b == nil {
					t.Errorf("Summaries(%v): a bound is a nil slice, which Avro writes as null", tc.vals)
				}
			}
		})
	}
}

// TestRepairSummaries restores the empty-value bounds a writer left null,
// and only those.
func TestRepairSummaries(t *testing.T) {
	empty := ptr([]byte{})
	for _, tc := range []struct {
		name    string
		field   string
		in      iceberg.FieldSummary
		want    iceberg.FieldSummary
		changed bool
	}{
		{"least value empty", "s", sum(nil, "k6", false), iceberg.FieldSummary{ContainsNaN: ptr(false), LowerBound: empty, UpperBound: bin("k6")}, true},
		{"no bounds, no null: not provably empty", "s", sum(nil, nil, false), sum(nil, nil, false), false},
		{"binary, least value empty", "bin", sum(nil, []byte{1}, true), iceberg.FieldSummary{ContainsNull: true, ContainsNaN: ptr(false), LowerBound: empty, UpperBound: bin([]byte{1})}, true},
		{"only nulls", "s", sum(nil, nil, true), sum(nil, nil, true), false},
		{"sound", "s", sum("a", "b", false), sum("a", "b", false), false},
		{"not a string", "l", sum(nil, int64(3), false), sum(nil, int64(3), false), false},
		{"void", "v", sum(nil, nil, false), sum(nil, nil, false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := compileSpec(t, sumSpec(0, tc.field))
			got, changed := s.RepairSummaries([]iceberg.FieldSummary{tc.in})
			if changed != tc.changed || fmtSums(got) != fmtSums([]iceberg.FieldSummary{tc.want}) {
				t.Errorf("RepairSummaries(%s) = %s, %v, want %s, %v", fmtSums([]iceberg.FieldSummary{tc.in}), fmtSums(got), changed, fmtSums([]iceberg.FieldSummary{tc.want}), tc.changed)
			}
		})
	}
}
