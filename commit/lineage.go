package commit

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	icetable "github.com/apache/iceberg-go/table"
)

// PropertyLineage is the table property that keeps the lineage of expired
// snapshots: when snapshots are expired through icerun (backfill's
// hygiene), the same commit records here the latest write of every
// partition made by the snapshots it expires (and by those an earlier
// checkpoint stood for). Lineage then reads the snapshots that remain and
// ends with this checkpoint, so resuming, Unchanged and history keep
// working after expiry, while the metadata grows with the partitions, not
// with the commits.
const PropertyLineage = "icerun.lineage"

// Record is icerun's record of one write of one partition.
type Record struct {
	Key         string // canonical key text
	SnapshotID  int64  // the snapshot that made the write
	TimestampMs int64  // its commit time
	RunID       string
	CodeVersion string
	Fingerprint string // of the partition's input rows
	Files       string // hash of the paths of the partition's data files the write left
	Rows        int64  // input rows of the whole snapshot (every partition it wrote)
}

// snapshotRecords reads the per-partition records of an icerun snapshot's
// summary; nil for other snapshots and malformed summaries.
func snapshotRecords(s *icetable.Snapshot) []Record {
	if s.Summary == nil || s.Summary.Properties[SummaryPartitions] == "" {
		return nil
	}
	p := s.Summary.Properties
	ks := strings.Split(p[SummaryPartitions], ",")
	fps := strings.Split(p[SummaryPartitionFingerprints], ",")
	files := strings.Split(p[SummaryPartitionFiles], ",")
	if len(fps) != len(ks) || len(files) != len(ks) {
		return nil
	}
	rows, _ := strconv.ParseInt(p[SummaryRows], 10, 64)
	out := make([]Record, len(ks))
	for i, k := range ks {
		out[i] = Record{Key: k, SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs, RunID: p[SummaryRunID],
			CodeVersion: p[SummaryCodeVersion], Fingerprint: fps[i], Files: files[i], Rows: rows}
	}
	return out
}

// Records calls fn with every partition write icerun recorded on main's
// ancestry of md, newest first, until fn returns false: the writes of the
// snapshots, then those of the lineage checkpoint ([PropertyLineage]) the
// oldest remaining snapshot descends from.
func Records(md icetable.Metadata, fn func(Record) bool) {
	recordsFrom(md, md.CurrentSnapshot(), fn)
}

// LastRecords returns the newest record of each of keys that has one.
func LastRecords(md icetable.Metadata, keys map[string]bool) map[string]Record {
	out := make(map[string]Record)
	if len(keys) == 0 {
		return out
	}
	Records(md, func(r Record) bool {
		if _, seen := out[r.Key]; keys[r.Key] && !seen {
			out[r.Key] = r
		}
		return len(out) < len(keys)
	})
	return out
}

func recordsFrom(md icetable.Metadata, s *icetable.Snapshot, fn func(Record) bool) {
	cp := readCheckpoint(md)
	for s != nil {
		for _, r := range snapshotRecords(s) {
			if !fn(r) {
				return
			}
		}
		if s.ParentSnapshotID == nil {
			return
		}
		if cp != nil && *s.ParentSnapshotID == cp.Base {
			cp.each(fn)
			return
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
}

// checkpoint is the JSON form of PropertyLineage: the latest write of
// every partition on the ancestry of snapshot Base, Base included. Run ids
// and code versions are stored once each.
type checkpoint struct {
	Base  int64            `json:"base"`
	Runs  []string         `json:"runs"`
	Codes []string         `json:"codes"`
	Parts []checkpointPart `json:"parts"`
}

// checkpointPart is one record; Run and Code index Runs and Codes.
type checkpointPart struct {
	Key   string `json:"k"`
	Snap  int64  `json:"s"`
	TS    int64  `json:"t"`
	Run   int    `json:"r"`
	Code  int    `json:"c"`
	FP    string `json:"f"`
	Files string `json:"h"`
	Rows  int64  `json:"n"`
}

func readCheckpoint(md icetable.Metadata) *checkpoint {
	raw := md.Properties()[PropertyLineage]
	if raw == "" {
		return nil
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(raw), &cp); err != nil {
		return nil // unreadable: lineage ends with the snapshots
	}
	return &cp
}

func (cp *checkpoint) each(fn func(Record) bool) {
	for _, p := range cp.Parts {
		r, ok := cp.record(p)
		if ok && !fn(r) {
			return
		}
	}
}

func (cp *checkpoint) record(p checkpointPart) (Record, bool) {
	if p.Run < 0 || p.Run >= len(cp.Runs) || p.Code < 0 || p.Code >= len(cp.Codes) {
		return Record{}, false
	}
	return Record{Key: p.Key, SnapshotID: p.Snap, TimestampMs: p.TS, RunID: cp.Runs[p.Run],
		CodeVersion: cp.Codes[p.Code], Fingerprint: p.FP, Files: p.Files, Rows: p.Rows}, true
}

// Checkpoint returns the value of [PropertyLineage] that stands for the
// snapshot base and its ancestors in md: the latest record of every
// partition written by them, including what an earlier checkpoint held.
// A commit that expires base and its ancestors sets it.
func Checkpoint(md icetable.Metadata, base int64) (string, error) {
	s := md.SnapshotByID(base)
	if s == nil {
		return "", fmt.Errorf("lineage checkpoint: snapshot %d is not in the table", base)
	}
	cp := checkpoint{Base: base, Runs: []string{}, Codes: []string{}, Parts: []checkpointPart{}}
	runs, codes := map[string]int{}, map[string]int{}
	index := func(m map[string]int, list *[]string, v string) int {
		i, ok := m[v]
		if !ok {
			i = len(*list)
			m[v] = i
			*list = append(*list, v)
		}
		return i
	}
	seen := map[string]bool{}
	recordsFrom(md, s, func(r Record) bool {
		if !seen[r.Key] {
			seen[r.Key] = true
			cp.Parts = append(cp.Parts, checkpointPart{Key: r.Key, Snap: r.SnapshotID, TS: r.TimestampMs,
				Run: index(runs, &cp.Runs, r.RunID), Code: index(codes, &cp.Codes, r.CodeVersion), FP: r.Fingerprint, Files: r.Files, Rows: r.Rows})
		}
		return true
	})
	b, err := json.Marshal(cp)
	return string(b), err
}
