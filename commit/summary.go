package commit

import (
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Snapshot summary properties written on every commit.
const (
	SummaryPartitions       = "icerun.partitions"        // canonical keys replaced, comma-separated
	SummaryRunID            = "icerun.run-id"            // the run that made the snapshot
	SummaryCodeVersion      = "icerun.code-version"      // the transformation that produced the rows
	SummarySchemaID         = "icerun.schema-id"         // the table schema the rows were resolved to
	SummaryInputFingerprint = "icerun.input-fingerprint" // order-insensitive hash of all input rows
	SummaryRows             = "icerun.rows"              // input rows
	SummaryCommitToken      = "icerun.commit-token"      // unique per call: finds our own commit after an unknown outcome
	// SummaryPartitionFingerprints holds one input fingerprint per key of
	// SummaryPartitions, in the same order.
	SummaryPartitionFingerprints = "icerun.partition-fingerprints"
	// SummaryPartitionFiles holds, per key, a hash of the paths of the data
	// files the snapshot left in that partition: when the partition still
	// holds exactly those files, nothing touched it since.
	SummaryPartitionFiles = "icerun.partition-files"
	// SummaryPartitionInputs holds, per key, the identity of its input
	// (Part.Input, query-escaped), when some part has one.
	SummaryPartitionInputs = "icerun.partition-inputs"
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
		if s.Summary != nil && s.Summary.Properties[SummaryCommitToken] == token {
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
