package snapshotcommit

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

func TestIsConflict(t *testing.T) {
	good := []error{ // nothing was applied: retry
		fmt.Errorf("%w: table db.t metadata-location moved underneath us", icetable.ErrCommitFailed),
		errors.New(`requirement failed: branch "main" has changed: expected id 1, found 2`),
		errors.New(`requirement failed: branch "main" was created concurrently`),
		fmt.Errorf("wrapped: %w", icetable.ErrConflictingDataFiles),
		// another ref committed since the commit was planned
		errors.New("can't add snapshot with sequence number 5, must be > than last sequence number 5"),
		errors.New("Cannot add snapshot with sequence number 5 older than last sequence number 5"),
		fmt.Errorf("%w: first-row-id 40 is behind table next-row-id 50", icetable.ErrInvalidRowLineage),
		// the current metadata.json pruned by other writers' commits before
		// the catalog read it (delete-after-commit)
		&fs.PathError{Op: "open", Path: "/w/db.db/t/metadata/00005-adc9d14a-818f-465f-bfff-68006f78aa28.metadata.json", Err: fs.ErrNotExist},
	}
	bad := []error{ // may have been applied: look for the token
		errors.New("connection reset by peer"),
		errors.New("database is locked"),
		&fs.PathError{Op: "open", Path: "/w/db.db/t/data/x.parquet", Err: fs.ErrNotExist},
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

func TestRecordsRoundTrip(t *testing.T) {
	lin := Lineage{RunID: "r", CodeVersion: "v7", SchemaID: 3}
	props := summaryOf(lin, "tok", nil, nil, nil, []string{"1-aa", "2-bb"}, []string{"1-f", "0-0"})
	props[commit.SummaryPartitions] = "d=2026-07-14,d=2026-07-15"
	props[commit.SummaryRows] = "9"
	snap := &icetable.Snapshot{SnapshotID: 42, TimestampMs: 7, Summary: &icetable.Summary{Properties: props}}
	got := snapshotRecords(snap)
	want := []Record{
		{Key: "d=2026-07-14", SnapshotID: 42, TimestampMs: 7, RunID: "r", CodeVersion: "v7", Fingerprint: "1-aa", Files: "1-f", Rows: 9, SpecID: -1},
		{Key: "d=2026-07-15", SnapshotID: 42, TimestampMs: 7, RunID: "r", CodeVersion: "v7", Fingerprint: "2-bb", Files: "0-0", Rows: 9, SpecID: -1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("snapshotRecords = %v, want %v", got, want)
	}
	bad := &icetable.Snapshot{Summary: &icetable.Summary{Properties: map[string]string{commit.SummaryPartitions: "a,b", commit.SummaryPartitionFingerprints: "x"}}}
	if snapshotRecords(bad) != nil {
		t.Error("records of a malformed summary must be nil")
	}
}

// TestRecordsOfTheUnpartitionedKey: an unpartitioned table's one key is
// "", so its snapshots record an empty key list: one record of key "".
// A snapshot without the property records nothing.
func TestRecordsOfTheUnpartitionedKey(t *testing.T) {
	k, err := partition.ParseKey(*iceberg.UnpartitionedSpec, iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64}), "")
	if err != nil {
		t.Fatal(err)
	}
	lin := Lineage{RunID: "r", CodeVersion: "v7", SchemaID: 3}
	props := summaryOf(lin, "tok", nil, nil, []Part{{Key: k, Rows: 4}}, []string{"1-aa"}, []string{"1-f"})
	if v, ok := props[commit.SummaryPartitions]; !ok || v != "" {
		t.Fatalf("summary of the unpartitioned key: %s = %q (present: %v), want \"\"", commit.SummaryPartitions, v, ok)
	}
	snap := &icetable.Snapshot{SnapshotID: 42, TimestampMs: 7, Summary: &icetable.Summary{Properties: props}}
	got := snapshotRecords(snap)
	want := []Record{{Key: "", SnapshotID: 42, TimestampMs: 7, RunID: "r", CodeVersion: "v7", Fingerprint: "1-aa", Files: "1-f", Rows: 4, SpecID: -1}}
	if !slices.Equal(got, want) {
		t.Errorf("snapshotRecords = %v, want %v", got, want)
	}
	other := &icetable.Snapshot{Summary: &icetable.Summary{Properties: map[string]string{"added-records": "3"}}}
	if got := snapshotRecords(other); got != nil {
		t.Errorf("records of a snapshot without %s = %v, want nil", commit.SummaryPartitions, got)
	}
}
