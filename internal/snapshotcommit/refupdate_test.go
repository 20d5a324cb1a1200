package snapshotcommit

import (
	"encoding/json"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refsMetadata is a format-v2 table whose main, branch audit and tag v1
// carry retention, and whose branch bare has none.
const refsMetadata = `{
  "format-version": 2,
  "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "file:///tmp/t",
  "last-sequence-number": 2,
  "last-updated-ms": 1700000000000,
  "last-column-id": 1,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": false, "type": "long"}]}],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": []}],
  "last-partition-id": 999,
  "default-sort-order-id": 0,
  "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {},
  "current-snapshot-id": 2,
  "snapshots": [
    {"snapshot-id": 1, "sequence-number": 1, "timestamp-ms": 1700000000000, "manifest-list": "file:///tmp/t/metadata/snap-1.avro", "summary": {"operation": "append"}, "schema-id": 0},
    {"snapshot-id": 2, "parent-snapshot-id": 1, "sequence-number": 2, "timestamp-ms": 1700000001000, "manifest-list": "file:///tmp/t/metadata/snap-2.avro", "summary": {"operation": "append"}, "schema-id": 0}
  ],
  "refs": {
    "main": {"snapshot-id": 2, "type": "branch", "min-snapshots-to-keep": 5, "max-snapshot-age-ms": 604800000},
    "audit": {"snapshot-id": 1, "type": "branch", "min-snapshots-to-keep": 3, "max-snapshot-age-ms": 172800000, "max-ref-age-ms": 2592000000},
    "bare": {"snapshot-id": 1, "type": "branch"},
    "v1": {"snapshot-id": 1, "type": "tag", "max-ref-age-ms": 86400000}
  },
  "snapshot-log": [{"snapshot-id": 1, "timestamp-ms": 1700000000000}, {"snapshot-id": 2, "timestamp-ms": 1700000001000}],
  "metadata-log": []
}`

// TestSetBranchKeepsRetention checks the JSON of the set-snapshot-ref
// update a commit sends (what a REST catalog receives): an existing
// branch's retention unchanged, a new branch (or a tag's name) none, and
// never a non-positive value, which Java's catalogs refuse.
func TestSetBranchKeepsRetention(t *testing.T) {
	md, err := icetable.ParseMetadataString(refsMetadata)
	require.NoError(t, err)
	for _, tc := range []struct {
		ref  string
		want string
	}{
		{"main", `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":7,"max-snapshot-age-ms":604800000,"min-snapshots-to-keep":5}`},
		{"audit", `{"action":"set-snapshot-ref","ref-name":"audit","type":"branch","snapshot-id":7,"max-ref-age-ms":2592000000,"max-snapshot-age-ms":172800000,"min-snapshots-to-keep":3}`},
		{"bare", `{"action":"set-snapshot-ref","ref-name":"bare","type":"branch","snapshot-id":7}`},
		{"new", `{"action":"set-snapshot-ref","ref-name":"new","type":"branch","snapshot-id":7}`},
		{"v1", `{"action":"set-snapshot-ref","ref-name":"v1","type":"branch","snapshot-id":7}`},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			got, err := json.Marshal(setBranch(md, tc.ref, 7))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			var fields map[string]any
			require.NoError(t, json.Unmarshal(got, &fields))
			for _, k := range []string{"max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"} {
				if v, ok := fields[k]; ok {
					assert.Greater(t, v.(float64), 0.0, "%s of %s", k, tc.ref)
				}
			}
		})
	}
}
