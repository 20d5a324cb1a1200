package commit

// Snapshot summary properties written on every commit. Any Iceberg
// engine reads them; table.History and table.LastWrites decode them.
const (
	SummaryPartitions       = "icerun.partitions"        // canonical keys replaced, comma-separated
	SummaryRunID            = "icerun.run-id"            // the run that made the snapshot
	SummaryCodeVersion      = "icerun.code-version"      // the transformation that produced the rows
	SummarySchemaID         = "icerun.schema-id"         // the table schema the rows were resolved to
	SummaryInputFingerprint = "icerun.input-fingerprint" // SHA-256 of the input rows in order (docs/fingerprint.md)
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
	// (the rows' input identity, query-escaped), when some partition has one.
	SummaryPartitionInputs = "icerun.partition-inputs"
	// SummaryPartitionSpecID is the id of the partition spec the keys of
	// SummaryPartitions were written under: the same key text names other
	// rows under another spec (bucket[4] and bucket[8] of one field name).
	SummaryPartitionSpecID = "icerun.partition-spec-id"
)

// Summary properties of a snapshot that published a branch onto main by
// re-planning its replacements: the branch, and the branch head it
// published. The next publish of the branch starts from there.
const (
	SummaryPublishedBranch = "icerun.published-branch"
	SummaryPublishedHead   = "icerun.published-head"
)

// PropertyLineage is the table property that keeps the lineage of expired
// snapshots. When snapshots are expired through icerun (backfill's
// hygiene), a checkpoint file is written under the table location
// (_icerun/lineage-<uuid>.json) with the latest write of every partition made by the snapshots
// it expires (and by those an earlier checkpoint stood for), and the same
// commit sets this property to its path. Lineage then reads the snapshots
// that remain and ends with the checkpoint, so resuming, Unchanged and
// history keep working after expiry; metadata.json, which every commit
// parses, holds only the path. The file is JSON; package cleanup never
// takes it for an orphan.
const PropertyLineage = "icerun.lineage"
