package partition

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

func TestFilter(t *testing.T) {
	ref := func(s string) iceberg.Reference { return iceberg.Reference(s) }
	and := func(a, b iceberg.BooleanExpression) iceberg.BooleanExpression { return iceberg.NewAnd(a, b) }
	day := int64(20648) // 2026-07-14
	cases := []struct {
		key  string
		want iceberg.BooleanExpression
	}{
		{"i=5", iceberg.EqualTo(ref("i"), int32(5))},
		{"i=null", iceberg.IsNull(ref("i"))},
		{"s=%6Eull", iceberg.EqualTo(ref("s"), "null")},
		{"f=NaN", iceberg.IsNaN(ref("f"))},
		{"dec=1.25", iceberg.EqualTo(ref("dec"), iceberg.Decimal{Val: decimal128.FromI64(125), Scale: 2})},
		{"inner=x", iceberg.EqualTo(ref("st.inner"), "x")},
		{"ts_day=2026-07-14", and(
			iceberg.GreaterThanEqual(ref("ts"), iceberg.Timestamp(day*usPerDay)),
			iceberg.LessThan(ref("ts"), iceberg.Timestamp((day+1)*usPerDay)))},
		{"ts_day=null", iceberg.IsNull(ref("ts"))},
		{"ts_hour=1970-01-01-01", and(
			iceberg.GreaterThanEqual(ref("ts"), iceberg.Timestamp(usPerHour)),
			iceberg.LessThan(ref("ts"), iceberg.Timestamp(2*usPerHour)))},
		{"dt_month=2026-12", and(
			iceberg.GreaterThanEqual(ref("dt"), iceberg.Date(daysFromCivil(2026, 12, 1))),
			iceberg.LessThan(ref("dt"), iceberg.Date(daysFromCivil(2027, 1, 1))))},
		{"dt_year=2026", and(
			iceberg.GreaterThanEqual(ref("dt"), iceberg.Date(daysFromCivil(2026, 1, 1))),
			iceberg.LessThan(ref("dt"), iceberg.Date(daysFromCivil(2027, 1, 1))))},
		{"tsns_hour=1970-01-01-00", and(
			iceberg.GreaterThanEqual(ref("tsns"), iceberg.TimestampNano(0)),
			iceberg.LessThan(ref("tsns"), iceberg.TimestampNano(3600e9)))},
		{"tstzns_month=9999-12", iceberg.AlwaysTrue{}}, // beyond nanosecond range
		{"i_trunc=-20", and(iceberg.GreaterThanEqual(ref("i"), int32(-20)), iceberg.LessThan(ref("i"), int32(-10)))},
		{"i_trunc=2147483640", iceberg.GreaterThanEqual(ref("i"), int32(2147483640))},
		// The wrapped truncation of the minimum: the rows from the minimum
		// to the first multiple of the width.
		{"i_trunc=2147483646", and(iceberg.GreaterThanEqual(ref("i"), int32(math.MinInt32)), iceberg.LessThan(ref("i"), int32(-2147483640)))},
		{"l_trunc=9223372036854775616", and(iceberg.GreaterThanEqual(ref("l"), int64(math.MinInt64)), iceberg.LessThan(ref("l"), int64(-9223372036854775000)))},
		{"dec_trunc=-10000000.00", and(
			iceberg.GreaterThanEqual(ref("dec"), iceberg.Decimal{Val: decimal128.FromI64(-1000000000), Scale: 2}),
			iceberg.LessThan(ref("dec"), iceberg.Decimal{Val: decimal128.FromI64(-999999900), Scale: 2}))},
		{"l_trunc=1000", and(iceberg.GreaterThanEqual(ref("l"), int64(1000)), iceberg.LessThan(ref("l"), int64(2000)))},
		{"dec_trunc=1.00", and(
			iceberg.GreaterThanEqual(ref("dec"), iceberg.Decimal{Val: decimal128.FromI64(100), Scale: 2}),
			iceberg.LessThan(ref("dec"), iceberg.Decimal{Val: decimal128.FromI64(200), Scale: 2}))},
		{"s_trunc=ab", iceberg.StartsWith(ref("s"), "ab")},
		{"s_bucket=3", iceberg.AlwaysTrue{}},
		{"s_bucket=null", iceberg.IsNull(ref("s"))},
		{"v=null", iceberg.AlwaysTrue{}},
	}
	for _, tc := range cases {
		name := tc.key[:strings.IndexByte(tc.key, '=')]
		s := fieldSpec(t, name)
		k, err := s.Parse(tc.key)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.key, err)
		}
		if got := s.Filter(k); got.String() != tc.want.String() {
			t.Errorf("Filter(%q) = %s, want %s", tc.key, got, tc.want)
		}
		// Every filter binds to the schema.
		if _, err := iceberg.BindExpr(testSchema, s.Filter(k), true); err != nil {
			t.Errorf("BindExpr(Filter(%q)) = %v", tc.key, err)
		}
	}
}

func TestFilterMultiField(t *testing.T) {
	s := multiSpec(t)
	k, err := s.Parse("event_date=2026-07-14/region=eu/shard=3/a%2Fb%3Dc=00")
	if err != nil {
		t.Fatal(err)
	}
	day := int64(20648)
	want := iceberg.NewAnd(
		iceberg.NewAnd(
			iceberg.GreaterThanEqual(iceberg.Reference("ts"), iceberg.Timestamp(day*usPerDay)),
			iceberg.LessThan(iceberg.Reference("ts"), iceberg.Timestamp((day+1)*usPerDay))),
		iceberg.EqualTo(iceberg.Reference("s"), "eu"),
		iceberg.EqualTo(iceberg.Reference("bin"), []byte{0}))
	if got := s.Filter(k); got.String() != want.String() {
		t.Errorf("Filter(%q) = %s, want %s", k, got, want)
	}
	if got := s.Filter(Key{}); got != (iceberg.AlwaysTrue{}) {
		t.Errorf("Filter(Key{}) = %s, want AlwaysTrue", got)
	}
	un, _ := NewSpec(*iceberg.UnpartitionedSpec, testSchema)
	uk, _ := un.Parse("")
	if got := un.Filter(uk); got != (iceberg.AlwaysTrue{}) {
		t.Errorf("Filter(unpartitioned) = %s, want AlwaysTrue", got)
	}
}
