package table

import (
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/snapshotcommit"
)

// Write is one icerun snapshot's write of a partition, as its summary
// records it (the commit.Summary* properties).
type Write struct {
	SnapshotID  int64
	TimestampMs int64 // the snapshot's commit time, as the catalog recorded it
	RunID       string
	CodeVersion string
	Fingerprint string // of the partition's input rows
	Rows        int64  // input rows of the whole snapshot (every partition it wrote)
	Input       string // identity of the partition's input, when the rows had one (InputIdentifier)
}

// History returns the writes of partition key (canonical text) on the
// main branch's ancestry of tbl's current snapshot, newest first. Writes
// by other engines are not in it; of the writes of expired snapshots only
// the latest survives, in the lineage checkpoint (commit.PropertyLineage)
// that icerun's expiry leaves.
func History(tbl *icetable.Table, key string) []Write {
	var out []Write
	snapshotcommit.Records(tbl, func(r snapshotcommit.Record) bool {
		if r.Key == key {
			out = append(out, write(r))
		}
		return true
	})
	return out
}

// LastWrites returns the newest write of each of keys that has one.
func LastWrites(tbl *icetable.Table, keys []string) map[string]Write {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	out := make(map[string]Write)
	for k, r := range snapshotcommit.LastRecords(tbl, want) {
		out[k] = write(r)
	}
	return out
}

func write(r snapshotcommit.Record) Write {
	return Write{SnapshotID: r.SnapshotID, TimestampMs: r.TimestampMs, RunID: r.RunID, CodeVersion: r.CodeVersion, Fingerprint: r.Fingerprint, Rows: r.Rows, Input: r.Input}
}
