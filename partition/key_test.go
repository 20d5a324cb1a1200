package partition

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
)

// goodKeys are accepted single-field keys with their canonical text
// (want "" means the input is canonical).
var goodKeys = []struct{ field, in, want string }{
	{"b", "b=true", ""},
	{"b", "b=false", ""},
	{"i", "i=-42", ""},
	{"i", "i=+7", "i=7"},
	{"i", "i=007", "i=7"},
	{"i", "i=2147483647", ""},
	{"l", "l=-9223372036854775808", ""},
	{"f", "f=1.5", ""},
	{"f", "f=0.1", ""},
	{"f", "f=NaN", ""},
	{"f", "f=+Inf", ""},
	{"f", "f=-Inf", ""},
	{"f", "f=-0", ""},
	{"d", "d=1e+100", ""},
	{"d", "d=1E100", "d=1e+100"},
	{"d", "d=0.30000000000000004", ""},
	{"dec", "dec=-12.50", ""},
	{"dec", "dec=0.05", ""},
	{"dec", "dec=-0.00", "dec=0.00"},
	{"dec", "dec=0012.30", "dec=12.30"},
	{"dec", "dec=9999999.99", ""},
	{"dec0", "dec0=-12345678901234567890123456789012345678", ""},
	{"dt", "dt=2026-07-14", ""},
	{"dt", "dt=2024-02-29", ""},
	{"dt", "dt=0000-01-01", ""},
	{"dt", "dt=9999-12-31", ""},
	{"dt", "dt=1969-12-31", ""},
	{"t", "t=00:00:00.000000", ""},
	{"t", "t=23:59:59.999999", ""},
	{"ts", "ts=2026-07-14T10:11:12.123456", ""},
	{"ts", "ts=1969-12-31T23:59:59.999999", ""},
	{"tstz", "tstz=2026-07-14T10:11:12.000000+00:00", ""},
	{"tsns", "tsns=2026-07-14T10:11:12.123456789", ""},
	{"tsns", "tsns=1677-09-21T00:12:43.145224192", ""},
	{"tsns", "tsns=2262-04-11T23:47:16.854775807", ""},
	{"tstzns", "tstzns=2026-07-14T10:11:12.123456789+00:00", ""},
	{"s", "s=hello", ""},
	{"s", "s=", ""},
	{"s", "s=a b+c:d", ""},
	{"s", "s=a%2Fb%3Dc%25d%2Ce", ""},
	{"s", "s=a%2fb", "s=a%2Fb"},
	{"s", "s=été", "s=%C3%A9t%C3%A9"},
	{"s", "s=%C3%A9t%C3%A9", ""},
	{"s", "s=日本", "s=%E6%97%A5%E6%9C%AC"},
	{"s", "s=%0A%7F%1F", ""},
	{"s", "s=%6Eull", ""},
	{"s", "s=%6eull", "s=%6Eull"},
	{"s", "s=nul%6C", "s=%6Eull"},
	{"s", "s=NULL", ""},
	{"s", "s=null", ""},
	{"u", "u=f81d4fae-7dec-11d0-a765-00a0c91e6bf6", ""},
	{"u", "u=F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6", "u=f81d4fae-7dec-11d0-a765-00a0c91e6bf6"},
	{"fx", "fx=deadbeef", ""},
	{"fx", "fx=DEADBEEF", "fx=deadbeef"},
	{"bin", "bin=", ""},
	{"bin", "bin=00ff", ""},
	{"bin", "bin=null", ""},
	{"inner", "inner=x", ""},
	{"ts_year", "ts_year=2026", ""},
	{"ts_year", "ts_year=1969", ""},
	{"ts_month", "ts_month=2026-07", ""},
	{"ts_month", "ts_month=1969-12", ""},
	{"ts_day", "ts_day=2026-07-14", ""},
	{"ts_hour", "ts_hour=2026-07-14-10", ""},
	{"ts_hour", "ts_hour=1969-12-31-23", ""},
	{"dt_year", "dt_year=0000", ""},
	{"dt_month", "dt_month=9999-12", ""},
	{"dt_day", "dt_day=2026-07-14", ""},
	{"tstz_day", "tstz_day=2026-07-14", ""},
	{"tsns_hour", "tsns_hour=2026-07-14-00", ""},
	{"tstzns_month", "tstzns_month=2026-01", ""},
	{"s_bucket", "s_bucket=0", ""},
	{"s_bucket", "s_bucket=15", ""},
	{"i_bucket", "i_bucket=7", ""},
	{"u_bucket", "u_bucket=3", ""},
	{"i_trunc", "i_trunc=-20", ""},
	{"i_trunc", "i_trunc=0", ""},
	{"l_trunc", "l_trunc=123000", ""},
	{"dec_trunc", "dec_trunc=12.00", ""},
	{"dec_trunc", "dec_trunc=-1.00", ""},
	// Truncations that Java and iceberg-go produce at the edges of the
	// source type: decimal(9,2) -9999999.99 truncates to ten digits, and
	// int and long truncation of the minimum wraps.
	{"dec_trunc", "dec_trunc=-10000000.00", ""},
	{"dec_trunc", "dec_trunc=9999999.00", ""},
	{"i_trunc", "i_trunc=2147483646", ""},
	{"i_trunc", "i_trunc=-2147483640", ""},
	{"l_trunc", "l_trunc=9223372036854775616", ""},
	{"s_trunc", "s_trunc=ab", ""},
	{"s_trunc", "s_trunc=%C3%A9t%C3%A9", ""},
	{"bin_trunc", "bin_trunc=ff00", ""},
	{"bin_trunc", "bin_trunc=", ""},
	{"v", "v=null", ""},
}

func TestParseKey(t *testing.T) {
	for _, tc := range goodKeys {
		want := tc.want
		if want == "" {
			want = tc.in
		}
		s := fieldSpec(t, tc.field)
		k, err := s.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, want)

			continue
		}
		if got := k.String(); got != want {
			t.Errorf("Parse(%q) = %q, want %q", tc.in, got, want)
		}
		if !k.IsValid() || k.SpecID() != 0 {
			t.Errorf("Parse(%q) = valid %v spec %d, want valid, spec 0", tc.in, k.IsValid(), k.SpecID())
		}
		if k2, err := s.Parse(k.String()); err != nil || k2 != k {
			t.Errorf("Parse(%q) = %v, %v, want %v", k.String(), k2, err, k)
		}
	}
}

// Every null is written "null", for every type and transform.
func TestParseKeyNull(t *testing.T) {
	for _, f := range testFields {
		s := newTestSpec(t, 0, f)
		in := escape(f.name) + "=null"
		k, err := s.Parse(in)
		if err != nil || k.String() != in {
			t.Errorf("Parse(%q) = %v, %v, want %q", in, k, err, in)

			continue
		}
		vals, err := s.Values(k)
		if err != nil || len(vals) != 1 || vals[1000] != nil {
			t.Errorf("Values(%v) = %v, %v, want map[1000:<nil>]", k, vals, err)
		}
	}
}

var badKeys = []struct{ field, in, want string }{
	{"dt", "dt=2026-13-01", `partition: key "dt=2026-13-01": field dt: bad date "2026-13-01"`},
	{"dt", "dt=2026-02-30", `bad date "2026-02-30"`},
	{"dt", "dt=2026-7-14", `bad date`},
	{"dt", "dt=10000-01-01", `bad date`},
	{"dt", "dt=-001-01-01", `bad date`},
	{"dt", "dt=2026-07-14 ", `bad date`},
	{"dt", "dt=", `partition: key "dt=": field dt: missing value`},
	{"i", "i=", `missing value`},
	{"b", "b=", `missing value`},
	{"u", "u=", `missing value`},
	{"fx", "fx=", `missing value`},
	{"i", "i=1.5", `bad int "1.5"`},
	{"i", "i=2147483648", `bad int`},
	{"i", "i=1_000", `bad int`},
	{"l", "l=9223372036854775808", `bad long`},
	{"b", "b=TRUE", `bad bool "TRUE"`},
	{"b", "b=1", `bad bool`},
	{"f", "f=1e50", `bad float`},
	{"f", "f=abc", `bad float`},
	{"d", "d=1e400", `bad double`},
	{"dec", "dec=1.5", `bad decimal "1.5"`},
	{"dec", "dec=1.234", `bad decimal`},
	{"dec", "dec=12345678.00", `bad decimal`},
	{"dec", "dec=.50", `bad decimal`},
	{"dec", "dec=+1.00", `bad decimal`},
	{"dec0", "dec0=1.0", `bad decimal`},
	{"t", "t=24:00:00.000000", `bad time`},
	{"t", "t=10:00:00", `bad time`},
	{"t", "t=10:60:00.000000", `bad time`},
	{"ts", "ts=2026-07-14 10:11:12.123456", `bad timestamp`},
	{"ts", "ts=2026-07-14T10:11:12.123", `bad timestamp`},
	{"ts", "ts=2026-07-14T10:11:12.123456+00:00", `bad timestamp`},
	{"tstz", "tstz=2026-07-14T10:11:12.123456", `bad timestamptz`},
	{"tstz", "tstz=2026-07-14T10:11:12.123456+01:00", `bad timestamptz`},
	{"tsns", "tsns=2262-04-11T23:47:16.854775808", `bad timestamp_ns`},
	{"tsns", "tsns=2026-07-14T10:11:12.123456", `bad timestamp_ns`},
	{"u", "u=xyz", `bad uuid`},
	{"fx", "fx=dead", `bad fixed "dead": 2 bytes, want 4`},
	{"bin", "bin=abc", `bad binary`},
	{"bin", "bin=zz", `bad binary`},
	{"s", "s=%ZZ", `bad escape in value "%ZZ"`},
	{"s", "s=%4", `bad escape`},
	{"s", "s=abc%", `bad escape`},
	{"s", "s=%FF", `bad string "\xff": invalid UTF-8`},
	{"s", "s=a=b", `unescaped "=" in value "a=b"`},
	{"ts_year", "ts_year=26", `bad year "26"`},
	{"ts_year", "ts_year=-001", `bad year`},
	{"ts_month", "ts_month=2026-13", `bad month`},
	{"ts_month", "ts_month=2026-07-01", `bad month`},
	{"ts_day", "ts_day=2026-07-32", `bad date`},
	{"ts_hour", "ts_hour=2026-07-14-24", `bad hour`},
	{"ts_hour", "ts_hour=2026-07-14T10", `bad hour`},
	{"s_bucket", "s_bucket=16", `bucket 16 out of range [0,16)`},
	{"s_bucket", "s_bucket=-1", `out of range`},
	{"s_bucket", "s_bucket=x", `bad int`},
	{"i_trunc", "i_trunc=5", `int "5" is not truncated to width 10`},
	{"l_trunc", "l_trunc=-1", `not truncated`},
	{"dec_trunc", "dec_trunc=12.01", `not truncated`},
	{"dec_trunc", "dec_trunc=-10000001.00", `not truncated`},
	{"dec_trunc", "dec_trunc=-10000100.00", `not truncated`},
	{"dec_trunc", "dec_trunc=10000000.00", `not truncated`},
	{"i_trunc", "i_trunc=2147483636", `not truncated`},
	{"l_trunc", "l_trunc=9223372036854775606", `not truncated`},
	{"s_trunc", "s_trunc=abcd", `string "abcd" is not truncated to width 3`},
	{"bin_trunc", "bin_trunc=aabbcc", `not truncated`},
	{"v", "v=1", `void value must be null, got "1"`},
	{"v", "v=", `void value must be null`},
	{"s", "x=1", `partition: key "x=1": unknown field "x"`},
	{"s", "S=1", `unknown field "S"`},
	{"s", "s=1/s=2", `partition: key "s=1/s=2": field s: duplicate`},
	{"s", "s", `segment "s": missing "="`},
	{"s", "s=1/", `segment "": missing "="`},
	{"s", "", `partition: key "": field s: missing`},
	{"s", "%ZZ=1", `bad escape in field name "%ZZ"`},
}

func TestParseKeyErrors(t *testing.T) {
	for _, tc := range badKeys {
		s := fieldSpec(t, tc.field)
		k, err := s.Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want error %q", tc.in, k, tc.want)

			continue
		}
		if !errors.Is(err, ErrMalformedKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %q, want error wrapping ErrMalformedKey containing %q", tc.in, err, tc.want)
		}
		if k.IsValid() {
			t.Errorf("Parse(%q) = valid %v with error", tc.in, k)
		}
	}
}

func multiSpec(t testing.TB) *Spec {
	return newTestSpec(t, 3,
		pf{9, "event_date", iceberg.DayTransform{}},
		pf{13, "region", iceberg.IdentityTransform{}},
		pf{2, "shard", iceberg.BucketTransform{NumBuckets: 8}},
		pf{16, "a/b=c", iceberg.IdentityTransform{}},
	)
}

func TestParseKeyMultiField(t *testing.T) {
	const canonical = "event_date=2026-07-14/region=eu%2Fwest/shard=3/a%2Fb%3Dc=00"
	good := []string{
		canonical,
		"region=eu%2Fwest/event_date=2026-07-14/a%2Fb%3Dc=00/shard=3",
		"a%2fb%3dc=00/shard=3/region=eu%2fwest/event_date=2026-07-14",
	}
	s := multiSpec(t)
	for _, in := range good {
		k, err := s.Parse(in)
		if err != nil || k.String() != canonical || k.SpecID() != 3 {
			t.Errorf("Parse(%q) = %q, %v, want %q", in, k, err, canonical)
		}
	}
	bad := []struct{ in, want string }{
		{"event_date=2026-07-14/region=eu/shard=3", `field a/b=c: missing`},
		{"event_date=2026-07-14/region=eu/shard=3/a%2Fb%3Dc=00/region=us", `field region: duplicate`},
		{"event_date=2026-07-14/region=eu/shard=3/a%2Fb%3Dc=00/zone=1", `unknown field "zone"`},
		{"event_date=2026-07-14/region=eu/shard=8/a%2Fb%3Dc=00", `field shard: bucket 8 out of range [0,8)`},
		{"event_date=2026-07-14/region=eu/shard=3/a/b=c=00", `segment "a": missing "="`},
	}
	for _, tc := range bad {
		if k, err := s.Parse(tc.in); err == nil || !errors.Is(err, ErrMalformedKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %q, %v, want error containing %q", tc.in, k, err, tc.want)
		}
	}
}

func TestParseKeyUnpartitioned(t *testing.T) {
	k, err := ParseKey(*iceberg.UnpartitionedSpec, testSchema, "")
	if err != nil || !k.IsValid() || k.String() != "" || k.SpecID() != 0 {
		t.Fatalf(`ParseKey(unpartitioned, "") = %q, %v, want ""`, k, err)
	}
	for _, in := range []string{"a=1", "/", "="} {
		if k, err := ParseKey(*iceberg.UnpartitionedSpec, testSchema, in); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("ParseKey(unpartitioned, %q) = %q, %v, want ErrMalformedKey", in, k, err)
		}
	}
}

func TestKeyValue(t *testing.T) {
	var zero Key
	if zero.IsValid() || zero.String() != "invalid key" {
		t.Errorf("Key{} = valid %v, %q, want invalid, %q", zero.IsValid(), zero.String(), "invalid key")
	}
	a := newTestSpec(t, 1, testFields[1])
	b := newTestSpec(t, 2, testFields[1])
	ka, _ := a.Parse("i=1")
	kb, _ := b.Parse("i=1")
	ka2, _ := a.Parse("i=01")
	if ka == kb {
		t.Errorf("keys of spec 1 and 2 are equal: %v", ka)
	}
	if ka != ka2 {
		t.Errorf("Parse(i=1) = %#v, Parse(i=01) = %#v, want equal", ka, ka2)
	}
	m := map[Key]bool{ka: true}
	if !m[ka2] || m[kb] {
		t.Errorf("map lookup by key: got %v %v, want true false", m[ka2], m[kb])
	}
}

func TestNewSpecErrors(t *testing.T) {
	cases := []struct {
		name string
		f    iceberg.PartitionField
		want string
	}{
		{"missing source", iceberg.PartitionField{SourceIDs: []int{99}, FieldID: 1000, Name: "x", Transform: iceberg.IdentityTransform{}}, "source column id 99 not in schema"},
		{"bad transform", iceberg.PartitionField{SourceIDs: []int{13}, FieldID: 1000, Name: "x", Transform: iceberg.DayTransform{}}, "cannot apply"},
		{"struct source", iceberg.PartitionField{SourceIDs: []int{17}, FieldID: 1000, Name: "x", Transform: iceberg.IdentityTransform{}}, "cannot apply"},
		{"multi source", iceberg.PartitionField{SourceIDs: []int{2, 3}, FieldID: 1000, Name: "x", Transform: iceberg.IdentityTransform{}}, "several source columns"},
	}
	for _, tc := range cases {
		_, err := NewSpec(iceberg.NewPartitionSpec(tc.f), testSchema)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "partition: ") {
			t.Errorf("NewSpec(%s) = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewSpec(*iceberg.UnpartitionedSpec, nil); err == nil {
		t.Errorf("NewSpec(unpartitioned, nil) = nil error, want error")
	}
	// A void field whose source column was dropped still compiles.
	void := iceberg.PartitionField{SourceIDs: []int{99}, FieldID: 1000, Name: "gone", Transform: iceberg.VoidTransform{}}
	s, err := NewSpec(iceberg.NewPartitionSpec(void), testSchema)
	if err != nil {
		t.Fatalf("NewSpec(void of dropped column) = %v", err)
	}
	if k, err := s.Parse("gone=null"); err != nil || k.String() != "gone=null" {
		t.Errorf("Parse(gone=null) = %q, %v", k, err)
	}
}

// The truncation of every edge value of the source type is a key: what
// Java and iceberg-go compute for a row (the wrapped int and long
// minimum, a decimal one digit longer than its precision) parses, and
// reads back from its partition value.
func TestTruncateEdgeValues(t *testing.T) {
	dec := func(unscaled int64) iceberg.Decimal {
		return iceberg.Decimal{Val: decimal128.FromI64(unscaled), Scale: 2}
	}
	for _, tc := range []struct {
		field string
		src   any
		want  string
	}{
		{"i_trunc", int32(math.MinInt32), "i_trunc=2147483646"},
		{"i_trunc", int32(math.MinInt32 + 8), "i_trunc=-2147483640"},
		{"i_trunc", int32(math.MaxInt32), "i_trunc=2147483640"},
		{"l_trunc", int64(math.MinInt64), "l_trunc=9223372036854775616"},
		{"l_trunc", int64(math.MaxInt64), "l_trunc=9223372036854775000"},
		{"dec_trunc", dec(-999999999), "dec_trunc=-10000000.00"},
		{"dec_trunc", dec(-999999901), "dec_trunc=-10000000.00"},
		{"dec_trunc", dec(-999999900), "dec_trunc=-9999999.00"},
		{"dec_trunc", dec(999999999), "dec_trunc=9999999.00"},
	} {
		s := fieldSpec(t, tc.field)
		v := s.fields[0].apply(tc.src)
		k, err := s.KeyFromValues(map[int]any{1000: v})
		if err != nil || k.String() != tc.want {
			t.Errorf("%s of %v: KeyFromValues(%v) = %q, %v, want %q", tc.field, tc.src, v, k, err, tc.want)
		}
		if k2, err := s.Parse(tc.want); err != nil || k2 != k {
			t.Errorf("Parse(%q) = %q, %v, want %q", tc.want, k2, err, k)
		}
	}
}
