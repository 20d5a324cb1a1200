package backfill

import (
	"slices"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// Expiry's file cleanup. iceberg-go's own cleanup after ExpireSnapshots
// reads every entry of every manifest the remaining snapshots hold, to
// protect live data files: O(table) per expiry. On a linear history (one
// branch, main, and every snapshot on its ancestry) the files that expiry
// frees are known from far less (Iceberg's "incremental" cleanup):
//   - the manifest lists of the expired snapshots;
//   - the manifests they list that no remaining snapshot lists;
//   - the data files deleted by an expired snapshot or by the oldest
//     remaining one: each such commit recorded them as DELETED entries in
//     the manifests it added, and only snapshots before it reference them
//     (file paths are never re-added); a Puffin file of deletion
//     vectors only once no remaining snapshot holds a live vector of it
//     (one file holds the vectors of several data files).
// linear reports whether md qualifies; otherwise iceberg-go's cleanup runs.

// linear reports whether md has one branch, main, and every snapshot is on
// its ancestry.
func linear(md icetable.Metadata) bool {
	n := 0
	for range md.Refs() {
		n++
	}
	if n != 1 || md.SnapshotByName(icetable.MainBranch) == nil {
		return false
	}
	return len(mainAncestry(md)) == len(md.Snapshots())
}

// mainAncestry is main's current snapshot and its ancestors in md, newest
// first, as far as they are in md.
func mainAncestry(md icetable.Metadata) []*icetable.Snapshot {
	var out []*icetable.Snapshot
	for s := md.CurrentSnapshot(); s != nil; {
		out = append(out, s)
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}

// freedFiles lists the files that expiring every snapshot of before that
// after no longer has frees, on a linear history (see above).
func freedFiles(fsys iceio.IO, before, after icetable.Metadata) ([]string, error) {
	retained := map[string]bool{} // manifests listed by a remaining snapshot
	for _, s := range after.Snapshots() {
		ms, err := s.Manifests(fsys)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			retained[m.FilePath()] = true
		}
	}
	var out []string
	expired := map[int64]bool{}
	var oldestKept *icetable.Snapshot
	for _, s := range mainAncestry(before) {
		if after.SnapshotByID(s.SnapshotID) == nil {
			expired[s.SnapshotID] = true
		} else {
			oldestKept = s
		}
	}
	shared := map[string]bool{} // Puffin files of removed deletion vectors
	tombstonesOf := func(s *icetable.Snapshot, ms []iceberg.ManifestFile) error {
		for _, m := range ms {
			if m.SnapshotID() != s.SnapshotID || m.DeletedDataFiles() == 0 {
				continue
			}
			entries, err := m.FetchEntries(fsys, false)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if e.Status() == iceberg.EntryStatusDELETED && e.SnapshotID() == s.SnapshotID {
					if icetable.IsDeletionVector(e.DataFile()) {
						shared[e.DataFile().FilePath()] = true
						continue
					}
					out = append(out, e.DataFile().FilePath())
				}
			}
		}
		return nil
	}
	for id := range expired {
		s := before.SnapshotByID(id)
		ms, err := s.Manifests(fsys)
		if err != nil {
			return nil, err
		}
		if err := tombstonesOf(s, ms); err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !retained[m.FilePath()] {
				out = append(out, m.FilePath())
				retained[m.FilePath()] = true // once
			}
		}
		out = append(out, s.ManifestList)
	}
	if oldestKept != nil && len(expired) > 0 {
		ms, err := oldestKept.Manifests(fsys)
		if err != nil {
			return nil, err
		}
		if err := tombstonesOf(oldestKept, ms); err != nil {
			return nil, err
		}
	}
	freed, err := unreferenced(fsys, after, shared)
	if err != nil {
		return nil, err
	}
	out = append(out, freed...)
	for st := range before.Statistics() {
		if expired[st.SnapshotID] && st.StatisticsPath != "" {
			out = append(out, st.StatisticsPath)
		}
	}
	for st := range before.PartitionStatistics() {
		if expired[st.SnapshotID] && st.StatisticsPath != "" {
			out = append(out, st.StatisticsPath)
		}
	}
	return out, nil
}

// unreferenced are the Puffin files of puffins (files of deletion
// vectors some commit removed) that no live delete entry of a snapshot
// of after references: one Puffin file holds the vectors of several data
// files, and removing one vector leaves the others live. Only the delete
// manifests of the remaining snapshots are read, and only when there are
// such files.
func unreferenced(fsys iceio.IO, after icetable.Metadata, puffins map[string]bool) ([]string, error) {
	if len(puffins) == 0 {
		return nil, nil
	}
	read := map[string]bool{}
	for _, s := range after.Snapshots() {
		ms, err := s.Manifests(fsys)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.ManifestContent() != iceberg.ManifestContentDeletes || read[m.FilePath()] {
				continue
			}
			read[m.FilePath()] = true
			entries, err := m.FetchEntries(fsys, true)
			if err != nil {
				return nil, err
			}
			for _, e := range entries {
				delete(puffins, e.DataFile().FilePath())
			}
		}
	}
	out := make([]string, 0, len(puffins))
	for p := range puffins {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}
