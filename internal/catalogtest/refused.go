package catalogtest

import (
	"fmt"
	"os"
	"testing"
)

// CI reports whether the tests run under CI=true, where every service,
// engine and setup step a test needs must be there.
func CI() bool { return os.Getenv("CI") == "true" }

// Refused ends a test whose setup step was refused (the catalog or
// iceberg-go would not create the table, a service or engine is missing):
// it skips the test with the reason, or, under CI=true, fails it, so a
// refused setup cannot pass CI as a silent skip.
func Refused(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI=true: a refused setup fails the test)", why)
		return
	}
	t.Skip(why)
}
