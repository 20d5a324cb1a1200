package partition

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// arrowSchema is testSchema as iceberg-go lays out write batches, reduced
// to the named top-level columns.
func arrowSchema(t testing.TB, cols ...string) *arrow.Schema {
	t.Helper()
	full, err := icetable.SchemaToArrowSchema(testSchema, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var fields []arrow.Field
	for _, c := range cols {
		i := full.FieldIndices(c)
		if len(i) != 1 {
			t.Fatalf("no column %q", c)
		}
		fields = append(fields, full.Field(i[0]))
	}

	return arrow.NewSchema(fields, nil)
}

func recordJSON(t testing.TB, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, sc, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("RecordFromJSON(%s) = %v", rows, err)
	}
	t.Cleanup(rec.Release)

	return rec
}

func TestMatcher(t *testing.T) {
	cases := []struct {
		key  string
		col  string
		rows string // JSON rows of col
		want []bool
	}{
		{"ts_day=2026-07-14", "ts",
			`[{"ts":"2026-07-14T00:00:00"},{"ts":"2026-07-14T23:59:59.999999"},{"ts":"2026-07-15T00:00:00"},{"ts":"2026-07-13T23:59:59.999999"},{"ts":null}]`,
			[]bool{true, true, false, false, false}},
		{"ts_day=null", "ts", `[{"ts":"2026-07-14T00:00:00"},{"ts":null}]`, []bool{false, true}},
		{"ts_day=1969-12-31", "ts", `[{"ts":-1},{"ts":0},{"ts":-86400000000},{"ts":-86400000001}]`, []bool{true, false, true, false}},
		{"ts_hour=2026-07-14-10", "ts", `[{"ts":"2026-07-14T10:00:00"},{"ts":"2026-07-14T10:59:59.999999"},{"ts":"2026-07-14T11:00:00"}]`, []bool{true, true, false}},
		{"ts_month=2026-02", "ts", `[{"ts":"2026-02-01T00:00:00"},{"ts":"2026-02-28T23:59:59.999999"},{"ts":"2026-03-01T00:00:00"},{"ts":"2026-01-31T23:59:59.999999"}]`, []bool{true, true, false, false}},
		{"ts_year=2024", "ts", `[{"ts":"2024-12-31T23:59:59.999999"},{"ts":"2025-01-01T00:00:00"}]`, []bool{true, false}},
		{"dt_day=2026-07-14", "dt", `[{"dt":"2026-07-14"},{"dt":"2026-07-15"},{"dt":null}]`, []bool{true, false, false}},
		{"dt_month=2026-07", "dt", `[{"dt":"2026-07-01"},{"dt":"2026-07-31"},{"dt":"2026-08-01"},{"dt":"2026-06-30"}]`, []bool{true, true, false, false}},
		{"dt_year=2026", "dt", `[{"dt":"2026-01-01"},{"dt":"2026-12-31"},{"dt":"2027-01-01"}]`, []bool{true, true, false}},
		{"tstz_day=2026-07-14", "tstz", `[{"tstz":"2026-07-14T12:00:00Z"},{"tstz":"2026-07-15T00:00:00Z"}]`, []bool{true, false}},
		{"tsns_hour=2026-07-14-10", "tsns", `[{"tsns":"2026-07-14T10:59:59.999999999"},{"tsns":"2026-07-14T11:00:00"}]`, []bool{true, false}},
		{"tstzns_month=9999-12", "tstzns", `[{"tstzns":"2262-04-11T23:47:16.854775807Z"},{"tstzns":null}]`, []bool{false, false}},
		{"b=true", "b", `[{"b":true},{"b":false},{"b":null}]`, []bool{true, false, false}},
		{"i=5", "i", `[{"i":5},{"i":6},{"i":null},{"i":5}]`, []bool{true, false, false, true}},
		{"i=null", "i", `[{"i":5},{"i":null}]`, []bool{false, true}},
		{"l=-1", "l", `[{"l":-1},{"l":1}]`, []bool{true, false}},
		{"f=NaN", "f", `[{"f":"NaN"},{"f":1}]`, []bool{true, false}},
		{"d=0", "d", `[{"d":0},{"d":-0.0},{"d":1}]`, []bool{true, false, false}},
		{"dec=12.50", "dec", `[{"dec":"12.50"},{"dec":"12.51"},{"dec":null}]`, []bool{true, false, false}},
		{"t=10:00:00.000000", "t", `[{"t":"10:00:00"},{"t":"10:00:00.000001"}]`, []bool{true, false}},
		{"ts=2026-07-14T10:00:00.000000", "ts", `[{"ts":"2026-07-14T10:00:00"},{"ts":"2026-07-14T10:00:00.000001"}]`, []bool{true, false}},
		{"s=eu", "s", `[{"s":"eu"},{"s":"EU"},{"s":""},{"s":null}]`, []bool{true, false, false, false}},
		{"s=", "s", `[{"s":"eu"},{"s":""},{"s":null}]`, []bool{false, true, false}},
		{"s=%6Eull", "s", `[{"s":"null"},{"s":null}]`, []bool{true, false}},
		{"bin=00ff", "bin", `[{"bin":"AP8="},{"bin":"AA=="}]`, []bool{true, false}},
		{"fx=00010203", "fx", `[{"fx":"AAECAw=="},{"fx":"AAECBA=="}]`, []bool{true, false}},
		{"u=f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "u", `[{"u":"f81d4fae-7dec-11d0-a765-00a0c91e6bf6"},{"u":"00000000-0000-0000-0000-000000000000"},{"u":null}]`, []bool{true, false, false}},
		{"i_trunc=-20", "i", `[{"i":-20},{"i":-11},{"i":-10},{"i":-21}]`, []bool{true, true, false, false}},
		{"l_trunc=1000", "l", `[{"l":1999},{"l":2000}]`, []bool{true, false}},
		{"dec_trunc=1.00", "dec", `[{"dec":"1.99"},{"dec":"2.00"},{"dec":"0.99"}]`, []bool{true, false, false}},
		{"s_trunc=ab", "s", `[{"s":"ab"},{"s":"abc"},{"s":"a"}]`, []bool{true, false, false}},
		{"s_trunc=abc", "s", `[{"s":"abc"},{"s":"abcd"},{"s":"ab"},{"s":"abd"}]`, []bool{true, true, false, false}},
		{"s_trunc=%C3%A9t%C3%A9", "s", `[{"s":"été"},{"s":"étés"},{"s":"ét"}]`, []bool{true, true, false}},
		{"bin_trunc=00ff", "bin", `[{"bin":"AP8="},{"bin":"AP8B"},{"bin":"AA=="}]`, []bool{true, true, false}},
		{"v=null", "s", `[{"s":"x"},{"s":null}]`, []bool{true, true}},
	}
	for _, tc := range cases {
		name := tc.key[:strings.IndexByte(tc.key, '=')]
		s := fieldSpec(t, name)
		k, err := s.Parse(tc.key)
		if err != nil {
			t.Fatalf("Parse(%q) = %v", tc.key, err)
		}
		sc := arrowSchema(t, tc.col)
		m, err := s.Matcher(k, sc)
		if err != nil {
			t.Fatalf("Matcher(%q) = %v", tc.key, err)
		}
		rec := recordJSON(t, sc, tc.rows)
		got, err := m.Mask(rec)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Mask(%q, %s) = %v, %v, want %v", tc.key, tc.rows, got, err, tc.want)
		}
		first := slices.Index(tc.want, false)
		err = m.Check(rec)
		switch {
		case first < 0 && err != nil:
			t.Errorf("Check(%q, %s) = %v, want nil", tc.key, tc.rows, err)
		case first >= 0 && (!errors.Is(err, ErrRowOutside) || !strings.HasPrefix(fmt.Sprint(err), fmt.Sprintf("partition: row %d has ", first))):
			t.Errorf("Check(%q, %s) = %v, want ErrRowOutside at row %d", tc.key, tc.rows, err, first)
		}
	}
}

// Bucket agrees with iceberg-go's transform on every row.
func TestMatcherBucket(t *testing.T) {
	s := fieldSpec(t, "i_bucket")
	fn := iceberg.BucketTransform{NumBuckets: 16}.Transformer(iceberg.PrimitiveTypes.Int32)
	sc := arrowSchema(t, "i")
	var rows []string
	for i := range 100 {
		rows = append(rows, fmt.Sprintf(`{"i":%d}`, i-50))
	}
	rec := recordJSON(t, sc, "["+strings.Join(rows, ",")+"]")
	for b := range 16 {
		k, err := s.Parse(fmt.Sprintf("i_bucket=%d", b))
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Matcher(k, sc)
		if err != nil {
			t.Fatal(err)
		}
		mask, err := m.Mask(rec)
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range mask {
			if want := fn(int32(i-50)).Val == int32(b); got != want {
				t.Errorf("Mask(i_bucket=%d)[i=%d] = %v, want %v", b, i-50, got, want)
			}
		}
	}
}

func TestMatcherMessage(t *testing.T) {
	s := newTestSpec(t, 0, pf{9, "event_date", iceberg.DayTransform{}}, pf{13, "region", iceberg.IdentityTransform{}})
	k, err := s.Parse("event_date=2026-07-14/region=eu")
	if err != nil {
		t.Fatal(err)
	}
	sc := arrowSchema(t, "s", "ts")
	m, err := s.Matcher(k, sc)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ rows, want string }{
		{`[{"ts":"2026-07-14T01:00:00","s":"eu"},{"ts":"2026-07-14T01:00:00","s":"eu"},{"ts":"2026-07-15T01:00:00","s":"eu"}]`,
			"partition: row 2 has event_date=2026-07-15, outside key event_date=2026-07-14/region=eu"},
		{`[{"ts":"2026-07-14T01:00:00","s":"eu"},{"ts":"2026-07-14T01:00:00","s":"a/b"},{"ts":"2026-07-15T01:00:00","s":"eu"}]`,
			"partition: row 1 has region=a%2Fb, outside key event_date=2026-07-14/region=eu"},
		{`[{"ts":null,"s":null}]`,
			"partition: row 0 has event_date=null, outside key event_date=2026-07-14/region=eu"},
		{`[{"ts":"2026-07-14T01:00:00","s":"eu"},{"ts":"2026-07-14T01:00:00","s":null}]`,
			"partition: row 1 has region=null, outside key event_date=2026-07-14/region=eu"},
	}
	for _, tc := range cases {
		err := m.Check(recordJSON(t, sc, tc.rows))
		if !errors.Is(err, ErrRowOutside) || err.Error() != tc.want {
			t.Errorf("Check(%s) = %v, want %q", tc.rows, err, tc.want)
		}
	}
	// The wrong region "null" (a string) is written %6Eull.
	err = m.Check(recordJSON(t, sc, `[{"ts":"2026-07-14T01:00:00","s":"null"}]`))
	if want := "partition: row 0 has region=%6Eull, outside key event_date=2026-07-14/region=eu"; err == nil || err.Error() != want {
		t.Errorf("Check(region \"null\") = %v, want %q", err, want)
	}
}

// Source columns inside structs are found by field id; a null parent makes
// the value null.
func TestMatcherNested(t *testing.T) {
	sc := arrowSchema(t, "st")
	rec := recordJSON(t, sc, `[{"st":{"inner":"x"}},{"st":{"inner":"y"}},{"st":null},{"st":{"inner":null}}]`)
	cases := []struct {
		key  string
		want []bool
	}{
		{"inner=x", []bool{true, false, false, false}},
		{"inner=null", []bool{false, false, true, true}},
	}
	s := fieldSpec(t, "inner")
	for _, tc := range cases {
		k, _ := s.Parse(tc.key)
		m, err := s.Matcher(k, sc)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := m.Mask(rec); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Mask(%q) = %v, %v, want %v", tc.key, got, err, tc.want)
		}
	}
}

func TestMatcherErrors(t *testing.T) {
	s := fieldSpec(t, "ts_day")
	k, _ := s.Parse("ts_day=2026-07-14")
	if _, err := s.Matcher(k, arrowSchema(t, "s")); err == nil || !strings.Contains(err.Error(), "not in Arrow schema") {
		t.Errorf("Matcher(no ts column) = %v, want not in Arrow schema", err)
	}
	wrong := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ms,
		Metadata: arrow.NewMetadata([]string{fieldIDKey}, []string{"9"})}}, nil)
	if _, err := s.Matcher(k, wrong); err == nil || !strings.Contains(err.Error(), "want the Arrow form") {
		t.Errorf("Matcher(ts in ms) = %v, want type error", err)
	}
	m, err := s.Matcher(k, arrowSchema(t, "ts"))
	if err != nil {
		t.Fatal(err)
	}
	other := recordJSON(t, arrowSchema(t, "s"), `[{"s":"x"}]`)
	if err := m.Check(other); err == nil || errors.Is(err, ErrRowOutside) {
		t.Errorf("Check(batch of another schema) = %v, want a type error", err)
	}
	// Unpartitioned: every row is in the one key.
	un, _ := NewSpec(*iceberg.UnpartitionedSpec, testSchema)
	uk, _ := un.Parse("")
	um, err := un.Matcher(uk, arrowSchema(t, "s"))
	if err != nil {
		t.Fatal(err)
	}
	if err := um.Check(other); err != nil {
		t.Errorf("unpartitioned Check = %v, want nil", err)
	}
}
