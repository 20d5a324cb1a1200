package partition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin for the DST cases, whatever the host has

	"github.com/apache/iceberg-go"
)

func keyTexts(ks []Key) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = k.String()
	}

	return strings.Join(s, " ")
}

func mustParse(t *testing.T, s *Spec, text string) Key {
	t.Helper()
	k, err := s.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q) = %v", text, err)
	}

	return k
}

func TestRange(t *testing.T) {
	tests := []struct {
		field, start, end, want string
	}{
		{"dt", "dt=2025-12-30", "dt=2026-01-02", "dt=2025-12-30 dt=2025-12-31 dt=2026-01-01 dt=2026-01-02"},
		{"dt", "dt=2028-02-28", "dt=2028-03-01", "dt=2028-02-28 dt=2028-02-29 dt=2028-03-01"},
		{"dt", "dt=2026-07-14", "dt=2026-07-14", "dt=2026-07-14"},
		{"ts_day", "ts_day=2025-12-31", "ts_day=2026-01-01", "ts_day=2025-12-31 ts_day=2026-01-01"},
		{"dt_day", "dt_day=1969-12-31", "dt_day=1970-01-01", "dt_day=1969-12-31 dt_day=1970-01-01"},
		{"ts_month", "ts_month=2025-11", "ts_month=2026-02", "ts_month=2025-11 ts_month=2025-12 ts_month=2026-01 ts_month=2026-02"},
		{"tstzns_month", "tstzns_month=1969-12", "tstzns_month=1970-01", "tstzns_month=1969-12 tstzns_month=1970-01"},
		{"ts_year", "ts_year=2025", "ts_year=2027", "ts_year=2025 ts_year=2026 ts_year=2027"},
		{"ts_hour", "ts_hour=2025-12-31-22", "ts_hour=2026-01-01-01", "ts_hour=2025-12-31-22 ts_hour=2025-12-31-23 ts_hour=2026-01-01-00 ts_hour=2026-01-01-01"},
		{"tsns_hour", "tsns_hour=2026-03-29-00", "tsns_hour=2026-03-29-02", "tsns_hour=2026-03-29-00 tsns_hour=2026-03-29-01 tsns_hour=2026-03-29-02"},
	}
	for _, tc := range tests {
		s := fieldSpec(t, tc.field)
		got, err := s.Range(mustParse(t, s, tc.start), mustParse(t, s, tc.end))
		if err != nil {
			t.Errorf("Range(%s, %s) = %v", tc.start, tc.end, err)
			continue
		}
		if keyTexts(got) != tc.want {
			t.Errorf("Range(%s, %s) = %s, want %s", tc.start, tc.end, keyTexts(got), tc.want)
		}
	}
}

// TestRangeDST enumerates the UTC hours of local (Europe/Berlin) nights in
// which the clocks change: every real hour appears once, with no gap for
// the skipped local hour in March and no repeat for the doubled one in
// October.
func TestRangeDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestSpec(t, 0, pf{10, "tstz_hour", iceberg.HourTransform{}})
	for _, night := range []struct {
		from, to  time.Time
		realHours int
	}{
		{time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), time.Date(2026, 3, 29, 5, 0, 0, 0, berlin), 4},   // 02:00 local does not exist
		{time.Date(2026, 10, 25, 0, 0, 0, 0, berlin), time.Date(2026, 10, 25, 5, 0, 0, 0, berlin), 6}, // 02:00 local happens twice
	} {
		var want []string
		for at := night.from; !at.After(night.to); at = at.Add(time.Hour) {
			want = append(want, "tstz_hour="+at.UTC().Format("2006-01-02-15"))
		}
		if len(want) != night.realHours+1 {
			t.Fatalf("test setup: %d hours from %v to %v, want %d", len(want), night.from, night.to, night.realHours+1)
		}
		got, err := s.Range(mustParse(t, s, want[0]), mustParse(t, s, want[len(want)-1]))
		if err != nil {
			t.Fatalf("Range(%s, %s) = %v", want[0], want[len(want)-1], err)
		}
		if keyTexts(got) != strings.Join(want, " ") {
			t.Errorf("Range(%s, %s) = %s, want %s", want[0], want[len(want)-1], keyTexts(got), strings.Join(want, " "))
		}
		last, err := s.Last(got[len(got)-1], len(want))
		if err != nil || keyTexts(last) != keyTexts(got) {
			t.Errorf("Last(%s, %d) = %s, %v, want %s", got[len(got)-1], len(want), keyTexts(last), err, keyTexts(got))
		}
	}
}

// TestRangeOtherFields keeps every field but the time field fixed.
func TestRangeOtherFields(t *testing.T) {
	s := newTestSpec(t, 0, pf{13, "s", identity}, pf{7, "dt", identity})
	got, err := s.Range(mustParse(t, s, "s=eu/dt=2026-01-31"), mustParse(t, s, "dt=2026-02-01/s=eu"))
	want := "s=eu/dt=2026-01-31 s=eu/dt=2026-02-01"
	if err != nil || keyTexts(got) != want {
		t.Errorf("Range = %s, %v, want %s", keyTexts(got), err, want)
	}
	_, err = s.Range(mustParse(t, s, "s=eu/dt=2026-01-31"), mustParse(t, s, "s=us/dt=2026-02-01"))
	if !errors.Is(err, ErrBadRange) {
		t.Errorf("Range(s=eu.., s=us..) = %v, want %v", err, ErrBadRange)
	}
}

func TestLast(t *testing.T) {
	tests := []struct {
		field, end string
		n          int
		want       string
	}{
		{"dt", "dt=2026-01-02", 3, "dt=2025-12-31 dt=2026-01-01 dt=2026-01-02"},
		{"dt", "dt=2026-01-02", 1, "dt=2026-01-02"},
		{"ts_month", "ts_month=2026-01", 2, "ts_month=2025-12 ts_month=2026-01"},
		{"ts_year", "ts_year=0001", 2, "ts_year=0000 ts_year=0001"},
		{"ts_hour", "ts_hour=2026-01-01-00", 2, "ts_hour=2025-12-31-23 ts_hour=2026-01-01-00"},
	}
	for _, tc := range tests {
		s := fieldSpec(t, tc.field)
		got, err := s.Last(mustParse(t, s, tc.end), tc.n)
		if err != nil || keyTexts(got) != tc.want {
			t.Errorf("Last(%s, %d) = %s, %v, want %s", tc.end, tc.n, keyTexts(got), err, tc.want)
		}
	}
}

func TestRangeErrors(t *testing.T) {
	day := fieldSpec(t, "dt")
	other := newTestSpec(t, 1, pf{7, "dt", identity})
	two := newTestSpec(t, 0, pf{9, "ts_day", dayTransform}, pf{7, "dt", identity})
	tests := []struct {
		name       string
		s          *Spec
		start, end string
		otherEnd   bool // end is parsed with spec other
		want       error
	}{
		{"start after end", day, "dt=2026-01-02", "dt=2026-01-01", false, ErrBadRange},
		{"start after end, hours", fieldSpec(t, "ts_hour"), "ts_hour=2026-01-01-00", "ts_hour=2025-12-31-23", false, ErrBadRange},
		{"start after end, months", fieldSpec(t, "ts_month"), "ts_month=2026-01", "ts_month=2025-12", false, ErrBadRange},
		{"too many keys", fieldSpec(t, "ts_hour"), "ts_hour=1900-01-01-00", "ts_hour=2026-01-01-00", false, ErrBadRange},
		{"no time field", fieldSpec(t, "s"), "s=a", "s=b", false, ErrBadRange},
		{"identity timestamp", fieldSpec(t, "ts"), "ts=2026-01-01T00:00:00.000000", "ts=2026-01-02T00:00:00.000000", false, ErrBadRange},
		{"bucket", fieldSpec(t, "i_bucket"), "i_bucket=1", "i_bucket=2", false, ErrBadRange},
		{"two time fields", two, "ts_day=2026-01-01/dt=2026-01-01", "ts_day=2026-01-02/dt=2026-01-01", false, ErrBadRange},
		{"null", day, "dt=null", "dt=2026-01-01", false, ErrBadRange},
		{"wrong spec", day, "dt=2026-01-01", "dt=2026-01-02", true, ErrWrongSpec},
	}
	for _, tc := range tests {
		start := mustParse(t, tc.s, tc.start)
		var end Key
		if tc.otherEnd {
			end = mustParse(t, other, tc.end)
		} else {
			end = mustParse(t, tc.s, tc.end)
		}
		if got, err := tc.s.Range(start, end); !errors.Is(err, tc.want) {
			t.Errorf("%s: Range(%s, %s) = %s, %v, want %v", tc.name, start, end, keyTexts(got), err, tc.want)
		}
	}
	if _, err := day.Range(Key{}, mustParse(t, day, "dt=2026-01-01")); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("Range(zero Key, ..) = %v, want %v", err, ErrMalformedKey)
	}
	for _, n := range []int{0, -1, MaxRangeKeys + 1} {
		if got, err := day.Last(mustParse(t, day, "dt=2026-01-01"), n); !errors.Is(err, ErrBadRange) {
			t.Errorf("Last(dt=2026-01-01, %d) = %s, %v, want %v", n, keyTexts(got), err, ErrBadRange)
		}
	}
	if got, err := day.Last(mustParse(t, day, "dt=0000-01-02"), 3); !errors.Is(err, ErrBadRange) {
		t.Errorf("Last(dt=0000-01-02, 3) = %s, %v, want %v", keyTexts(got), err, ErrBadRange)
	}
}

var (
	identity     = iceberg.IdentityTransform{}
	dayTransform = iceberg.DayTransform{}
)

func ExampleSpec_Range() {
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true})
	spec, err := NewSpec(iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "event_month", Transform: iceberg.MonthTransform{}}), sch)
	if err != nil {
		panic(err)
	}
	from, _ := spec.Parse("event_month=2025-11")
	to, _ := spec.Parse("event_month=2026-02")
	keys, err := spec.Range(from, to)
	fmt.Println(keys, err)
	last3, err := spec.Last(to, 3)
	fmt.Println(last3, err)
	_, err = spec.Range(to, from)
	fmt.Println(err)
	// Output:
	// [event_month=2025-11 event_month=2025-12 event_month=2026-01 event_month=2026-02] <nil>
	// [event_month=2025-12 event_month=2026-01 event_month=2026-02] <nil>
	// partition: bad key range: start event_month=2026-02 is after end event_month=2025-11
}
