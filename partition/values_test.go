package partition

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

func TestValuesRoundTrip(t *testing.T) {
	for _, tc := range goodKeys {
		s := fieldSpec(t, tc.field)
		k, err := s.Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.in, err)
		}
		vals, err := s.Values(k)
		if err != nil {
			t.Errorf("Values(%q) = %v", k, err)

			continue
		}
		if got, err := s.KeyFromValues(vals); err != nil || got != k {
			t.Errorf("KeyFromValues(%v) = %q, %v, want %q", vals, got, err, k)
		}
	}
}

func TestValuesTypes(t *testing.T) {
	u := uuid.MustParse("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
	cases := []struct {
		key  string
		want any
	}{
		{"b=true", true},
		{"i=-42", int32(-42)},
		{"l=7", int64(7)},
		{"f=1.5", float32(1.5)},
		{"d=2.5", 2.5},
		{"dec=-12.50", iceberg.Decimal{Val: decimal128.FromI64(-1250), Scale: 2}},
		{"dt=1970-01-02", iceberg.Date(1)},
		{"t=00:00:01.000002", iceberg.Time(1000002)},
		{"ts=1970-01-01T00:00:00.000001", iceberg.Timestamp(1)},
		{"tstz=1969-12-31T23:59:59.999999+00:00", iceberg.Timestamp(-1)},
		{"tsns=1970-01-01T00:00:00.000000001", iceberg.TimestampNano(1)},
		{"s=x", "x"},
		{"u=" + u.String(), u},
		{"fx=00010203", []byte{0, 1, 2, 3}},
		{"bin=ff", []byte{0xff}},
		{"ts_year=1971", int32(1)},
		{"ts_month=1970-03", int32(2)},
		{"ts_day=1970-01-03", iceberg.Date(2)},
		{"ts_hour=1970-01-01-05", int32(5)},
		{"s_bucket=9", int32(9)},
		{"i_trunc=-20", int32(-20)},
		{"s_trunc=ab", "ab"},
	}
	for _, tc := range cases {
		name, _, _ := strings.Cut(tc.key, "=")
		s := fieldSpec(t, name)
		k, err := s.Parse(tc.key)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.key, err)
		}
		vals, err := s.Values(k)
		if err != nil {
			t.Fatalf("Values(%q) = %v", tc.key, err)
		}
		got := vals[1000]
		if gb, ok := got.([]byte); ok {
			if string(gb) != string(tc.want.([]byte)) {
				t.Errorf("Values(%q) = %x, want %x", tc.key, gb, tc.want)
			}

			continue
		}
		if got != tc.want {
			t.Errorf("Values(%q) = %#v, want %#v", tc.key, got, tc.want)
		}
	}
}

// KeyFromValues takes the other Go types iceberg-go may hand out, in
// particular from manifests read back.
func TestKeyFromValuesForeignTypes(t *testing.T) {
	u := uuid.MustParse("f81d4fae-7dec-11d0-a765-00a0c91e6bf6")
	cases := []struct {
		field string
		v     any
		want  string
	}{
		{"i", iceberg.Int32Literal(5), "i=5"},
		{"i", int64(5), "i=5"},
		{"i", 5, "i=5"},
		{"l", int32(5), "l=5"},
		{"l", iceberg.Int64Literal(-5), "l=-5"},
		{"f", float64(1.5), "f=1.5"},
		{"d", float32(1.5), "d=1.5"},
		{"dec", iceberg.DecimalLiteral{Val: decimal128.FromI64(1250), Scale: 2}, "dec=12.50"},
		{"dt", int32(1), "dt=1970-01-02"},
		{"dt", time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), "dt=2026-07-14"},
		{"dt", iceberg.DateLiteral(0), "dt=1970-01-01"},
		{"ts_day", iceberg.Date(20648), "ts_day=2026-07-14"},
		{"ts_day", int32(20648), "ts_day=2026-07-14"},
		{"t", time.Duration(time.Second), "t=00:00:01.000000"},
		{"t", int64(1), "t=00:00:00.000001"},
		{"ts", time.Date(2026, 7, 14, 10, 0, 0, 1000, time.UTC), "ts=2026-07-14T10:00:00.000001"},
		{"ts", int64(0), "ts=1970-01-01T00:00:00.000000"},
		{"tsns", time.Date(2026, 7, 14, 10, 0, 0, 1, time.UTC), "tsns=2026-07-14T10:00:00.000000001"},
		{"s", []byte("x/y"), "s=x%2Fy"},
		{"s", iceberg.StringLiteral("null"), "s=%6Eull"},
		{"u", [16]byte(u), "u=" + u.String()},
		{"u", u[:], "u=" + u.String()},
		{"u", u.String(), "u=" + u.String()},
		{"fx", [4]byte{1, 2, 3, 4}, "fx=01020304"},
		{"fx", "abcd", "fx=61626364"},
		{"bin", []byte{}, "bin="},
		{"ts_year", int32(56), "ts_year=2026"},
		{"s_bucket", int32(3), "s_bucket=3"},
		{"v", nil, "v=null"},
	}
	for _, tc := range cases {
		s := fieldSpec(t, tc.field)
		k, err := s.KeyFromValues(map[int]any{1000: tc.v})
		if err != nil || k.String() != tc.want {
			t.Errorf("KeyFromValues(%T %v) = %q, %v, want %q", tc.v, tc.v, k, err, tc.want)
		}
	}
	s := fieldSpec(t, "v")
	if k, err := s.KeyFromValues(map[int]any{}); err != nil || k.String() != "v=null" {
		t.Errorf("KeyFromValues({}) = %q, %v, want v=null", k, err)
	}
}

func TestKeyFromValuesErrors(t *testing.T) {
	cases := []struct {
		field string
		vals  map[int]any
		want  string
	}{
		{"i", map[int]any{}, "partition: values: field i: missing (partition field id 1000)"},
		{"i", map[int]any{1000: int32(1), 1001: 2}, "unknown partition field ids [1001]"},
		{"i", map[int]any{1000: "1"}, "cannot use string 1 as int"},
		{"i", map[int]any{1000: int64(1) << 40}, "as int"},
		{"f", map[int]any{1000: 0.1}, "as float"},
		{"dec", map[int]any{1000: iceberg.Decimal{Val: decimal128.FromI64(1), Scale: 3}}, "scale 3, want 2"},
		{"dec", map[int]any{1000: iceberg.Decimal{Val: decimal128.FromBigInt(big.NewInt(1e12)), Scale: 2}}, "bad decimal"},
		{"dt", map[int]any{1000: iceberg.Date(4_000_000)}, "bad date"},
		{"dt", map[int]any{1000: time.Date(2026, 7, 14, 1, 0, 0, 0, time.UTC)}, "as date"},
		{"t", map[int]any{1000: iceberg.Time(86_400_000_000)}, "bad time"},
		{"ts", map[int]any{1000: time.Date(2026, 7, 14, 1, 0, 0, 1, time.UTC)}, "as timestamp"},
		{"s", map[int]any{1000: []byte{0xff}}, "as string"},
		{"u", map[int]any{1000: []byte{1}}, "as uuid"},
		{"fx", map[int]any{1000: []byte{1}}, "bad fixed"},
		{"s_bucket", map[int]any{1000: int32(16)}, "out of range"},
		{"i_trunc", map[int]any{1000: int32(3)}, "not truncated"},
		{"ts_year", map[int]any{1000: int32(9000)}, "bad year"},
		{"v", map[int]any{1000: "x"}, "void value must be null"},
	}
	for _, tc := range cases {
		s := fieldSpec(t, tc.field)
		k, err := s.KeyFromValues(tc.vals)
		if !errors.Is(err, ErrMalformedKey) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("KeyFromValues(%v) = %q, %v, want error containing %q", tc.vals, k, err, tc.want)
		}
	}
}

func TestValuesWrongSpec(t *testing.T) {
	a := newTestSpec(t, 1, testFields[1])
	b := newTestSpec(t, 2, testFields[1])
	k, err := a.Parse("i=1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Values(k); !errors.Is(err, ErrWrongSpec) {
		t.Errorf("Values(key of spec 1) on spec 2 = %v, want ErrWrongSpec", err)
	}
	if _, err := b.Matcher(k, nil); !errors.Is(err, ErrWrongSpec) {
		t.Errorf("Matcher(key of spec 1) on spec 2 = %v, want ErrWrongSpec", err)
	}
	if _, err := a.Values(Key{}); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("Values(Key{}) = %v, want ErrMalformedKey", err)
	}
}
