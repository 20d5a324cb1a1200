package snapshotcommit

import (
	"strings"
	"testing"
)

// The file-set hash tells apart path lists that a separator-based or a
// 64-bit hash could confuse, and never reads like the earlier "N-hex" form.
func TestFilesHashStrings(t *testing.T) {
	cases := [][2][]string{
		{{"a", "b"}, {"ab", ""}},
		{{"a\x00", "b"}, {"a", "\x00b"}},
		{{"x/1.parquet"}, {"x/2.parquet"}},
		{{}, {""}},
	}
	for _, c := range cases {
		if a, b := filesHashStrings(c[0]), filesHashStrings(c[1]); a == b {
			t.Errorf("filesHashStrings(%q) = filesHashStrings(%q) = %s, want different", c[0], c[1], a)
		}
	}
	got := filesHashStrings([]string{"x/1.parquet", "x/2.parquet"})
	if !strings.HasPrefix(got, "s2-2-") || len(got) != len("s2-2-")+64 {
		t.Errorf("filesHashStrings = %s, want s2-2- and 64 hex digits", got)
	}
}
