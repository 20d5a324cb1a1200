package commit

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
)

func TestIsConflict(t *testing.T) {
	good := []error{ // nothing was applied: retry
		fmt.Errorf("%w: table db.t metadata-location moved underneath us", icetable.ErrCommitFailed),
		errors.New(`requirement failed: branch "main" has changed: expected id 1, found 2`),
		errors.New(`requirement failed: branch "main" was created concurrently`),
		fmt.Errorf("wrapped: %w", icetable.ErrConflictingDataFiles),
	}
	bad := []error{ // may have been applied: look for the token
		errors.New("connection reset by peer"),
		errors.New("database is locked"),
	}
	for _, err := range good {
		if !IsConflict(err) {
			t.Errorf("IsConflict(%q) = false, want true", err)
		}
	}
	for _, err := range bad {
		if IsConflict(err) {
			t.Errorf("IsConflict(%q) = true, want false", err)
		}
	}
}

func TestPolicyDefaultsAndValidation(t *testing.T) {
	p, err := Policy{}.withDefaults()
	if err != nil || p != DefaultPolicy {
		t.Errorf("Policy{}.withDefaults() = %+v, %v, want %+v", p, err, DefaultPolicy)
	}
	for _, bad := range []Policy{{Attempts: -1}, {Timeout: -time.Second}, {MinBackoff: time.Second, MaxBackoff: time.Millisecond}} {
		if err := bad.Validate(); !errors.Is(err, ErrBadPolicy) {
			t.Errorf("%+v.Validate() = %v, want ErrBadPolicy", bad, err)
		}
	}
	p = Policy{MinBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond}
	for n := 1; n < 40; n++ {
		if b := p.backoff(n); b <= 0 || b > p.MaxBackoff {
			t.Errorf("backoff(%d) = %v, want in (0, %v]", n, b, p.MaxBackoff)
		}
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	req := Request{Lineage: Lineage{RunID: "r", CodeVersion: "v7", SchemaID: 3}, Token: "tok"}
	props := req.summary([]string{"1-aa", "2-bb"}, []string{"1-f", "0-0"})
	props[SummaryPartitions] = "d=2026-07-14,d=2026-07-15"
	props[SummaryRows] = "9"
	snap := &icetable.Snapshot{SnapshotID: 42, TimestampMs: 7, Summary: &icetable.Summary{Properties: props}}
	got := snapshotRecords(snap)
	want := []Record{
		{Key: "d=2026-07-14", SnapshotID: 42, TimestampMs: 7, RunID: "r", CodeVersion: "v7", Fingerprint: "1-aa", Files: "1-f", Rows: 9},
		{Key: "d=2026-07-15", SnapshotID: 42, TimestampMs: 7, RunID: "r", CodeVersion: "v7", Fingerprint: "2-bb", Files: "0-0", Rows: 9},
	}
	if !slices.Equal(got, want) {
		t.Errorf("snapshotRecords = %v, want %v", got, want)
	}
	bad := &icetable.Snapshot{Summary: &icetable.Summary{Properties: map[string]string{SummaryPartitions: "a,b", SummaryPartitionFingerprints: "x"}}}
	if snapshotRecords(bad) != nil {
		t.Error("records of a malformed summary must be nil")
	}
}
