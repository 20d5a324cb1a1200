package partition

import (
	"slices"
	"testing"
)

// TestSortKeys: keys sort by value, not by text ("-5" < "10" < "9" as
// text), nulls first, field by field; Compare agrees with the sort.
func TestSortKeys(t *testing.T) {
	for _, tc := range []struct {
		spec *Spec
		in   []string
		want []string
	}{
		{fieldSpec(t, "i"), []string{"i=9", "i=10", "i=-5", "i=null", "i=0"}, []string{"i=null", "i=-5", "i=0", "i=9", "i=10"}},
		{fieldSpec(t, "l"), []string{"l=100", "l=-100", "l=20"}, []string{"l=-100", "l=20", "l=100"}},
		{fieldSpec(t, "d"), []string{"d=2.5", "d=-1", "d=10"}, []string{"d=-1", "d=2.5", "d=10"}},
		{fieldSpec(t, "dt"), []string{"dt=2026-01-02", "dt=1969-12-31", "dt=2025-12-31"}, []string{"dt=1969-12-31", "dt=2025-12-31", "dt=2026-01-02"}},
		{fieldSpec(t, "ts_hour"), []string{"ts_hour=2026-01-01-10", "ts_hour=2026-01-01-09"}, []string{"ts_hour=2026-01-01-09", "ts_hour=2026-01-01-10"}},
		{fieldSpec(t, "i_bucket"), []string{"i_bucket=12", "i_bucket=3"}, []string{"i_bucket=3", "i_bucket=12"}},
		{fieldSpec(t, "s"), []string{"s=b", "s=a", "s=ab"}, []string{"s=a", "s=ab", "s=b"}},
		{newTestSpec(t, 0, testFields[1], testFields[12]), []string{"i=10/s=a", "i=9/s=b", "i=9/s=a"}, []string{"i=9/s=a", "i=9/s=b", "i=10/s=a"}},
	} {
		keys := make([]Key, len(tc.in))
		for i, s := range tc.in {
			k, err := tc.spec.Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", s, err)
			}
			keys[i] = k
		}
		tc.spec.SortKeys(keys)
		var got []string
		for _, k := range keys {
			got = append(got, k.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("SortKeys(%v) = %v, want %v", tc.in, got, tc.want)
		}
		for i := 1; i < len(keys); i++ {
			if c := tc.spec.Compare(keys[i-1], keys[i]); c >= 0 {
				t.Errorf("Compare(%s, %s) = %d, want < 0", keys[i-1], keys[i], c)
			}
			if c := tc.spec.Compare(keys[i], keys[i-1]); c <= 0 {
				t.Errorf("Compare(%s, %s) = %d, want > 0", keys[i], keys[i-1], c)
			}
		}
	}
}
