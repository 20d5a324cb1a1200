package snapshotcommit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	pathpkg "path"
	"strconv"
	"strings"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
)

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
	Input       string // identity of the partition's input (Part.Input); "" when none was given
	// SpecID is the partition spec Key was written under
	// (commit.SummaryPartitionSpecID); -1 when the snapshot does not say
	// (written before icerun recorded it, or read from a checkpoint).
	SpecID int
}

// snapshotRecords reads the per-partition records of an icerun snapshot's
// summary; nil for other snapshots and malformed summaries. The property
// is present but empty on an unpartitioned table: its one key is "".
func snapshotRecords(s *icetable.Snapshot) []Record {
	if s.Summary == nil {
		return nil
	}
	p := s.Summary.Properties
	raw, ok := p[commit.SummaryPartitions]
	if !ok {
		return nil
	}
	ks := strings.Split(raw, ",")
	fps := strings.Split(p[commit.SummaryPartitionFingerprints], ",")
	files := strings.Split(p[commit.SummaryPartitionFiles], ",")
	if len(fps) != len(ks) || len(files) != len(ks) {
		return nil
	}
	rows, _ := strconv.ParseInt(p[commit.SummaryRows], 10, 64)
	specID := -1
	if v, err := strconv.Atoi(p[commit.SummaryPartitionSpecID]); err == nil && v >= 0 {
		specID = v
	}
	out := make([]Record, len(ks))
	for i, k := range ks {
		out[i] = Record{Key: k, SnapshotID: s.SnapshotID, TimestampMs: s.TimestampMs, RunID: p[commit.SummaryRunID],
			CodeVersion: p[commit.SummaryCodeVersion], Fingerprint: fps[i], Files: files[i], Rows: rows, Input: inputAt(p, i), SpecID: specID}
	}
	return out
}

// Records calls fn with every partition write icerun recorded on main's
// ancestry of tbl's current snapshot, newest first, until fn returns
// false: the writes of the snapshots, then those of the lineage checkpoint
// ([commit.PropertyLineage]) the oldest remaining snapshot descends from. A
// checkpoint that cannot be read ends the lineage there.
func Records(tbl *icetable.Table, fn func(Record) bool) {
	md := tbl.Metadata()
	recordsFrom(tbl, md.CurrentSnapshot(), fn)
}

// LastRecords returns the newest record of each of keys that has one.
func LastRecords(tbl *icetable.Table, keys map[string]bool) map[string]Record {
	out := make(map[string]Record)
	if len(keys) == 0 {
		return out
	}
	Records(tbl, func(r Record) bool {
		if _, seen := out[r.Key]; keys[r.Key] && !seen {
			out[r.Key] = r
		}
		return len(out) < len(keys)
	})
	return out
}

func recordsFrom(tbl *icetable.Table, s *icetable.Snapshot, fn func(Record) bool) {
	md := tbl.Metadata()
	var cp *checkpoint
	if tbl.Properties()[commit.PropertyLineage] != "" {
		cp = loadCheckpoint(tbl)
	}
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

// checkpoint is the JSON form of commit.PropertyLineage: the latest write of
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
	In    string `json:"i,omitempty"`
}

// checkpoints caches parsed checkpoint files by path: a file is written
// once under a fresh name and never changed, and a long run reads the same
// one on every commit.
var checkpoints struct {
	sync.Mutex
	byPath map[string]*checkpoint
}

// loadCheckpoint reads the checkpoint tbl's PropertyLineage names; nil
// when there is none or it cannot be read.
func loadCheckpoint(tbl *icetable.Table) *checkpoint {
	path := tbl.Properties()[commit.PropertyLineage]
	if path == "" {
		return nil
	}
	checkpoints.Lock()
	cp, ok := checkpoints.byPath[path]
	checkpoints.Unlock()
	if ok {
		return cp
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		return nil
	}
	raw, err := readAll(fsys, path)
	if err != nil {
		return nil
	}
	cp = new(checkpoint)
	if err := json.Unmarshal(raw, cp); err != nil {
		return nil
	}
	checkpoints.Lock()
	if checkpoints.byPath == nil || len(checkpoints.byPath) >= 16 {
		checkpoints.byPath = make(map[string]*checkpoint)
	}
	checkpoints.byPath[path] = cp
	checkpoints.Unlock()
	return cp
}

// readAll reads the file path: a local file up to the size it had when
// opened, an object store's object (fs.ModeIrregular) whole. A device, a
// pipe, a socket or a folder (a hand-edited PropertyLineage naming
// /dev/zero would read forever) is an error.
func readAll(fsys iceio.IO, path string) ([]byte, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode()&(fs.ModeDir|fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0 {
		return nil, fmt.Errorf("%s: not a file (%s)", path, st.Mode())
	}
	if !st.Mode().IsRegular() {
		return io.ReadAll(f)
	}
	raw, err := io.ReadAll(io.LimitReader(f, st.Size()+1))
	if err == nil && int64(len(raw)) > st.Size() {
		err = fmt.Errorf("%s: grew while read", path)
	}
	return raw, err
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
		CodeVersion: cp.Codes[p.Code], Fingerprint: p.FP, Files: p.Files, Rows: p.Rows, Input: p.In, SpecID: -1}, true
}

// WriteCheckpoint writes the lineage checkpoint that stands for snapshot
// base of tbl and its ancestors, under tbl's location (_icerun/), and
// returns its path, the value of [commit.PropertyLineage] for the commit that
// expires them. It holds the latest record of every partition written by
// them, including what an earlier checkpoint held.
func WriteCheckpoint(ctx context.Context, tbl *icetable.Table, base int64) (string, error) {
	s := tbl.Metadata().SnapshotByID(base)
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
	recordsFrom(tbl, s, func(r Record) bool {
		if !seen[r.Key] {
			seen[r.Key] = true
			cp.Parts = append(cp.Parts, checkpointPart{Key: r.Key, Snap: r.SnapshotID, TS: r.TimestampMs,
				Run: index(runs, &cp.Runs, r.RunID), Code: index(codes, &cp.Codes, r.CodeVersion), FP: r.Fingerprint, Files: r.Files, Rows: r.Rows, In: r.Input})
		}
		return true
	})
	raw, err := json.Marshal(cp)
	if err != nil {
		return "", err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return "", err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("lineage checkpoint: %w: table file IO %T cannot write", commit.ErrUnsupported, fsys)
	}
	path := checkpointDir(tbl) + "/lineage-" + uuid.NewString() + ".json"
	if err := wfs.WriteFile(path, raw); err != nil {
		_ = wfs.Remove(path)
		return "", fmt.Errorf("lineage checkpoint: %w", err)
	}
	return path, nil
}

// checkpointDir is where checkpoints go: icerun's own directory under the
// table location. Catalogs that police the table layout (SeaweedFS's REST
// catalog refuses any *.json in metadata/ but *.metadata.json) allow
// format-owned "_name" directories beside metadata/ and data/.
func checkpointDir(tbl *icetable.Table) string {
	return strings.TrimSuffix(tbl.Location(), "/") + "/_icerun"
}

// IsCheckpoint reports whether path is tbl's current lineage checkpoint
// file (compared by file name: the same file may be spelled with other
// URI forms).
func IsCheckpoint(tbl *icetable.Table, path string) bool {
	cur := tbl.Properties()[commit.PropertyLineage]
	return cur != "" && pathpkg.Base(cur) == pathpkg.Base(path)
}
