package commit

import (
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Iceberg's standard snapshot summary properties, as Java's SnapshotSummary
// names them.
const (
	sumAddedFiles       = "added-data-files"
	sumAddedRecords     = "added-records"
	sumAddedSize        = "added-files-size"
	sumDeletedFiles     = "deleted-data-files"
	sumDeletedRecords   = "deleted-records"
	sumRemovedSize      = "removed-files-size"
	sumChangedParts     = "changed-partition-count"
	sumTotalFiles       = "total-data-files"
	sumTotalRecords     = "total-records"
	sumTotalSize        = "total-files-size"
	sumReplacePartition = "replace-partitions"
	sumCreatedManifests = "manifests-created"
	sumKeptManifests    = "manifests-kept"
	sumReplacedManifest = "manifests-replaced"
)

// carried are the totals a data-only commit leaves as its parent had them.
var carried = []string{"total-delete-files", "total-position-deletes", "total-equality-deletes"}

// Kind says which Java Iceberg operation a commit is, which decides the
// operation and properties of its snapshot summary.
type Kind uint8

const (
	// KindOverwrite replaces partitions the caller names, like Java's
	// OverwriteFiles with a row filter (Spark's static INSERT OVERWRITE and
	// copy-on-write MERGE): the operation is "append" when the commit only
	// adds files, "delete" when it only deletes, "overwrite" otherwise.
	KindOverwrite Kind = iota
	// KindReplacePartitions replaces the partitions its new files are in,
	// like Java's ReplacePartitions (Spark's dynamic INSERT OVERWRITE): the
	// operation is always "overwrite" and the summary says
	// replace-partitions=true.
	KindReplacePartitions
)

// manifestCounts are the manifests of a new snapshot: written by its
// commit, kept from the parent, and the parent's manifests it replaced
// (rewritten without deleted files, or merged).
type manifestCounts struct {
	created, kept, replaced int
}

// summary is the snapshot summary of a commit of kind that adds add and
// deletes del, with the properties Java's SnapshotSummary and
// SnapshotProducer write, under the same rules: icerun's lineage props,
// the added and deleted counts (each only when not zero), the changed
// partition count, the manifest counts, and the table totals from the
// parent's (from 0 without a parent; each omitted when the parent does
// not state it or it would be negative).
func (p *producer) summary(kind Kind, props iceberg.Properties, add, del []iceberg.DataFile, mc manifestCounts) *icetable.Summary {
	out := iceberg.Properties{}
	for k, v := range props {
		out[k] = v
	}
	var addRows, addSize, delRows, delSize int64
	parts := map[string]bool{}
	for _, f := range add {
		addRows += f.Count()
		addSize += f.FileSizeBytes()
		parts[p.partitionOf(f)] = true
	}
	for _, f := range del {
		delRows += f.Count()
		delSize += f.FileSizeBytes()
		parts[p.partitionOf(f)] = true
	}
	set := func(k string, v int64) { out[k] = strconv.FormatInt(v, 10) }
	setIf := func(k string, v int64) {
		if v > 0 {
			set(k, v)
		}
	}
	setIf(sumAddedFiles, int64(len(add)))
	setIf(sumDeletedFiles, int64(len(del)))
	setIf(sumAddedRecords, addRows)
	setIf(sumDeletedRecords, delRows)
	setIf(sumAddedSize, addSize)
	setIf(sumRemovedSize, delSize)
	set(sumChangedParts, int64(len(parts)))
	set(sumCreatedManifests, int64(mc.created))
	set(sumKeptManifests, int64(mc.kept))
	set(sumReplacedManifest, int64(mc.replaced))

	op := icetable.OpOverwrite
	switch {
	case kind == KindReplacePartitions:
		out[sumReplacePartition] = "true"
	case len(del) == 0:
		op = icetable.OpAppend
	case len(add) == 0:
		op = icetable.OpDelete // an emptied partition
	}

	var parent iceberg.Properties
	if cur := p.md.CurrentSnapshot(); cur != nil {
		parent = iceberg.Properties{}
		if cur.Summary != nil {
			parent = cur.Summary.Properties
		}
	}
	total := func(k string, delta int64) {
		if parent == nil {
			set(k, delta)
			return
		}
		if v, err := strconv.ParseInt(parent[k], 10, 64); err == nil && v+delta >= 0 {
			set(k, v+delta)
		}
	}
	total(sumTotalFiles, int64(len(add)-len(del)))
	total(sumTotalRecords, addRows-delRows)
	total(sumTotalSize, addSize-delSize)
	for _, k := range carried {
		total(k, 0)
	}

	return &icetable.Summary{Operation: op, Properties: out}
}

// partitionOf names f's partition for counting changed partitions: its
// key, without the spec id, as Java counts partition paths.
func (p *producer) partitionOf(f iceberg.DataFile) string {
	if s := p.spec(f.SpecID()); s != nil {
		if k, err := s.KeyFromValues(f.Partition()); err == nil {
			return k.String()
		}
	}

	return "file:" + f.FilePath()
}
