package reruntest

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	c := func(rows ...string) canonical { return canonical{header: "a|b", rows: rows} }
	cases := []struct {
		name      string
		want, got canonical
		diff      string // a substring of the report; "" for none
	}{
		{"equal", c("1|x", "2|y"), c("1|x", "2|y"), ""},
		{"both empty", c(), c(), ""},
		{"changed row", c("1|x", "2|y"), c("1|x", "2|z"), `first differing row (sorted row 1):` + "\n\tgot  \"2|z\"\n\twant \"2|y\""},
		{"extra row", c("1|x"), c("1|x", "1|x"), `2 rows, want 1; first extra row (sorted row 1): "1|x"`},
		{"missing row", c("1|x", "2|y"), c("1|x"), `1 rows, want 2; first missing row (sorted row 1): "2|y"`},
		{"columns", c("1|x"), canonical{header: "a|b|c", rows: []string{"1|x|"}}, `columns differ: got "a|b|c", want "a|b"`},
	}
	for _, tc := range cases {
		got := diff(tc.want, tc.got)
		if (tc.diff == "") != (got == "") || !strings.Contains(got, tc.diff) {
			t.Errorf("%s: diff = %q, want %q", tc.name, got, tc.diff)
		}
	}
}

func TestDuplicateKey(t *testing.T) {
	c := canonical{header: "id|ts|v", rows: []string{"1|10|a", "1|11|b", "2|10|c"}}
	cases := []struct {
		key  []string
		want string
	}{
		{[]string{"id", "ts"}, ""},
		{[]string{"id"}, "id=1"},
		{[]string{"ts"}, "ts=10"},
	}
	for _, tc := range cases {
		got, err := duplicateKey(c, tc.key)
		if err != nil || got != tc.want {
			t.Errorf("duplicateKey(%v) = %q, %v, want %q", tc.key, got, err, tc.want)
		}
	}
	if _, err := duplicateKey(c, []string{"nope"}); err == nil {
		t.Error("duplicateKey(nope) = nil error, want one")
	}
}
