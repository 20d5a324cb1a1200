package snapshotcommit

import (
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// Lineage says who produced a snapshot.
type Lineage struct {
	RunID       string
	CodeVersion string
	SchemaID    int
}

// findToken returns the snapshot on main's ancestry whose summary carries
// token.
func findToken(md icetable.Metadata, token string) *icetable.Snapshot {
	for s := md.CurrentSnapshot(); s != nil; {
		if s.Summary != nil && s.Summary.Properties[commit.SummaryCommitToken] == token {
			return s
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return nil
}

// filesHash is an order-insensitive hash of a set of file paths.
func filesHash(files []iceberg.DataFile) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.FilePath()
	}
	slices.Sort(paths)
	return filesHashStrings(paths)
}

// filesHashStrings hashes sorted strings.
func filesHashStrings(paths []string) string {
	h := fnv.New64a()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strconv.Itoa(len(paths)) + "-" + strconv.FormatUint(h.Sum64(), 16)
}
