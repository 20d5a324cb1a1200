package snapshotcommit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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

// filesHashStrings hashes sorted strings: "s2-", their count and SHA-256
// of each one's length and bytes, so that no other list of paths has the
// same text short of a SHA-256 collision (a 64-bit hash could be matched by
// an engine choosing its file names). The earlier 64-bit form ("N-hex")
// never equals this one: a partition it recorded is rewritten once.
func filesHashStrings(paths []string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range paths {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return "s2-" + strconv.Itoa(len(paths)) + "-" + hex.EncodeToString(h.Sum(nil))
}

// callerSummary is the summary of a commit whose caller supplies its
// properties (an append or a rewrite): fn's properties on this attempt's
// table state, when fn is set, and the commit token.
func callerSummary(tbl *icetable.Table, fn func(*icetable.Table) (iceberg.Properties, error), token string) (iceberg.Properties, error) {
	props := iceberg.Properties{}
	if fn != nil {
		p, err := fn(tbl)
		if err != nil {
			return nil, err
		}
		for k, v := range p {
			props[k] = v
		}
	}
	props[commit.SummaryCommitToken] = token
	return props, nil
}
