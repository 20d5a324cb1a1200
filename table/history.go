package table

import (
	"strconv"
	"strings"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
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
}

// History returns the writes of partition key (canonical text) on the
// main branch's ancestry of tbl's current snapshot, newest first. Writes
// by other engines and expired snapshots are not in it.
func History(tbl *icetable.Table, key string) []Write {
	var out []Write
	walk(tbl.Metadata(), func(s *icetable.Snapshot, keys []string, i int) bool {
		if keys[i] == key {
			out = append(out, write(s, i))
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
	walk(tbl.Metadata(), func(s *icetable.Snapshot, ks []string, i int) bool {
		if _, seen := out[ks[i]]; want[ks[i]] && !seen {
			out[ks[i]] = write(s, i)
		}
		return len(out) < len(want)
	})
	return out
}

// walk calls fn for every partition of every icerun snapshot on main's
// ancestry, newest first, until fn returns false.
func walk(md icetable.Metadata, fn func(s *icetable.Snapshot, keys []string, i int) bool) {
	for s := md.CurrentSnapshot(); s != nil; {
		if s.Summary != nil && s.Summary.Properties[commit.SummaryPartitions] != "" {
			keys := strings.Split(s.Summary.Properties[commit.SummaryPartitions], ",")
			for i := range keys {
				if !fn(s, keys, i) {
					return
				}
			}
		}
		if s.ParentSnapshotID == nil {
			return
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
}

func write(s *icetable.Snapshot, i int) Write {
	p := s.Summary.Properties
	w := Write{SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs, RunID: p[commit.SummaryRunID], CodeVersion: p[commit.SummaryCodeVersion]}
	if fps := strings.Split(p[commit.SummaryPartitionFingerprints], ","); i < len(fps) {
		w.Fingerprint = fps[i]
	}
	w.Rows, _ = strconv.ParseInt(p[commit.SummaryRows], 10, 64)
	return w
}
