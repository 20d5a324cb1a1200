package commit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/icerun/icerun/commit"
)

// A publish conflict names the partitions main replaced, and names an
// unpartitioned table's one partition in words, never as an empty word.
func TestPublishConflictErrorNamesPartitions(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"event_date=2026-07-14", "event_date=2026-07-15"}, "main replaced event_date=2026-07-14, event_date=2026-07-15 after branch audit"},
		{[]string{""}, "main replaced the unpartitioned table after branch audit"},
	} {
		err := error(&commit.PublishConflictError{Branch: "audit", Partitions: tc.parts})
		if !errors.Is(err, commit.ErrPublishConflict) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "  ") {
			t.Errorf("%v: %q, want errors.Is ErrPublishConflict and %q", tc.parts, err, tc.want)
		}
	}
}
