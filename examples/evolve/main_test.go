package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// After the rename and the rerun, the old producer's currency values are
// in currency_code, row for row.
func TestEvolve(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, t.TempDir()); err != nil {
		t.Fatalf("run = %v", err)
	}
	before, after, ok := strings.Cut(out.String(), "renamed currency -> currency_code")
	if !ok {
		t.Fatalf("no rename in output:\n%s", out.String())
	}
	if !strings.Contains(after, "| currency_code |") {
		t.Errorf("after the rename the column is not currency_code:\n%s", after)
	}
	rows := func(s string) []string {
		var r []string
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "| 2025-03-14") {
				r = append(r, l)
			}
		}
		return r
	}
	b, a := rows(before), rows(after)
	if len(b) != 3 || strings.Join(b, "\n") != strings.Join(a, "\n") {
		t.Errorf("rows changed by the rename and rerun:\nbefore %q\nafter  %q", b, a)
	}
}
