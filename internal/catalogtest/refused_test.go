package catalogtest

import (
	"testing"
)

// recorder is a testing.TB that records how a test ended.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestRefusedFailsUnderCI(t *testing.T) {
	for _, tc := range []struct {
		ci              string
		skipped, failed bool
	}{
		{ci: "", skipped: true},
		{ci: "false", skipped: true},
		{ci: "true", failed: true},
	} {
		t.Setenv("CI", tc.ci)
		r := &recorder{TB: t}
		Refused(r, "no %s", "broker")
		if r.skipped != tc.skipped || r.failed != tc.failed {
			t.Errorf("CI=%q: Refused skipped=%t failed=%t, want skipped=%t failed=%t", tc.ci, r.skipped, r.failed, tc.skipped, tc.failed)
		}
	}
}
