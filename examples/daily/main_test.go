package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The example runs on the embedded default, and the rerun is a no-op that
// keeps the 23:58 order in its event-date partition.
func TestDaily(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, t.TempDir(), "2026-07-14"); err != nil {
		t.Fatalf("run = %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"run   event_date=2026-07-14: rows=1000",
		"unchanged=false",
		"rerun event_date=2026-07-14: rows=1000",
		"unchanged=true",
		"holds 1000 rows (the 23:58 order included: true)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
