package commit

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

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
)

// Lineage says who produced a snapshot.
type Lineage struct {
	RunID       string
	CodeVersion string
	SchemaID    int
}

// record is what one icerun snapshot says about one partition.
type record struct {
	fingerprint string
	files       string
	codeVersion string
}

// records reads the per-partition records of an icerun snapshot summary.
func records(props iceberg.Properties) map[string]record {
	keys := props[SummaryPartitions]
	if keys == "" {
		return nil
	}
	ks := strings.Split(keys, ",")
	fps := strings.Split(props[SummaryPartitionFingerprints], ",")
	files := strings.Split(props[SummaryPartitionFiles], ",")
	if len(fps) != len(ks) || len(files) != len(ks) {
		return nil
	}
	out := make(map[string]record, len(ks))
	for i, k := range ks {
		out[k] = record{fingerprint: fps[i], files: files[i], codeVersion: props[SummaryCodeVersion]}
	}
	return out
}

// lastRecord finds the most recent snapshot on main's ancestry that
// recorded key, and what it recorded.
func lastRecord(md icetable.Metadata, key string) (record, bool) {
	for s := md.CurrentSnapshot(); s != nil; {
		if s.Summary != nil {
			if r, ok := records(s.Summary.Properties)[key]; ok {
				return r, true
			}
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = md.SnapshotByID(*s.ParentSnapshotID)
	}
	return record{}, false
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
