package snapshotcommit

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

// Java's summary properties of removed delete files.
const (
	sumRemovedDeleteFiles   = "removed-delete-files"
	sumRemovedPosFiles      = "removed-position-delete-files"
	sumRemovedDVs           = "removed-dvs"
	sumRemovedEqFiles       = "removed-equality-delete-files"
	sumRemovedPosDeletes    = "removed-position-deletes"
	sumRemovedEqDeletes     = "removed-equality-deletes"
	sumTotalDeleteFiles     = "total-delete-files"
	sumTotalPositionDeletes = "total-position-deletes"
	sumTotalEqualityDeletes = "total-equality-deletes"
	sumAddedDeleteFiles     = "added-delete-files"
	sumAddedPosFiles        = "added-position-delete-files"
	sumAddedDVs             = "added-dvs"
	sumAddedPosDeletes      = "added-position-deletes"
)

// removal counts what a commit removes, as Java's SnapshotSummary does.
type removal struct {
	dataFiles, records, size                      int64
	deleteFiles, posFiles, dvs, eqFiles, pos, eqs int64
}

func (r *removal) add(f iceberg.DataFile) {
	switch f.ContentType() {
	case iceberg.EntryContentData:
		r.dataFiles++
		r.records += f.Count()
		r.size += f.FileSizeBytes()
		return
	case iceberg.EntryContentPosDeletes:
		r.pos += f.Count()
		if icetable.IsDeletionVector(f) {
			r.dvs++
		} else {
			r.posFiles++
		}
	default:
		r.eqs += f.Count()
		r.eqFiles++
	}
	r.deleteFiles++
	if n := f.ContentSizeInBytes(); n != nil && icetable.IsDeletionVector(f) {
		r.size += *n // a vector's size is its blob's, not its Puffin file's
	} else {
		r.size += f.FileSizeBytes()
	}
}

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
	// KindRewrite rewrites files into others holding the same live rows,
	// like Java's RewriteFiles (a compaction): the operation is always
	// "replace", which tells incremental readers that no row changed.
	KindRewrite
)

// manifestCounts are the manifests of a new snapshot: written by its
// commit, kept from the parent, and the parent's manifests it replaced
// (rewritten without deleted files, or merged).
type manifestCounts struct {
	created, kept, replaced int
}

// summary is the snapshot summary of a commit of kind that adds the data
// files add and removes the files del (data and delete files), with the properties Java's SnapshotSummary and
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
	var addFiles, addRows, addSize int64
	var rm, addDel removal // removed files; added delete files
	parts := map[string]bool{}
	for _, f := range add {
		parts[p.partitionOf(f)] = true
		if f.ContentType() != iceberg.EntryContentData {
			addDel.add(f)
			continue
		}
		addFiles++
		addRows += f.Count()
		addSize += f.FileSizeBytes()
	}
	addSize += addDel.size
	for _, f := range del {
		rm.add(f)
		parts[p.partitionOf(f)] = true
	}
	set := func(k string, v int64) { out[k] = strconv.FormatInt(v, 10) }
	setIf := func(k string, v int64) {
		if v > 0 {
			set(k, v)
		}
	}
	setIf(sumAddedFiles, addFiles)
	setIf(sumAddedDeleteFiles, addDel.deleteFiles)
	setIf(sumAddedPosFiles, addDel.posFiles)
	setIf(sumAddedDVs, addDel.dvs)
	setIf(sumAddedPosDeletes, addDel.pos)
	setIf(sumDeletedFiles, rm.dataFiles)
	setIf(sumAddedRecords, addRows)
	setIf(sumDeletedRecords, rm.records)
	setIf(sumAddedSize, addSize)
	setIf(sumRemovedSize, rm.size)
	setIf(sumRemovedDeleteFiles, rm.deleteFiles)
	setIf(sumRemovedPosFiles, rm.posFiles)
	setIf(sumRemovedDVs, rm.dvs)
	setIf(sumRemovedEqFiles, rm.eqFiles)
	setIf(sumRemovedPosDeletes, rm.pos)
	setIf(sumRemovedEqDeletes, rm.eqs)
	set(sumChangedParts, int64(len(parts)))
	set(sumCreatedManifests, int64(mc.created))
	set(sumKeptManifests, int64(mc.kept))
	set(sumReplacedManifest, int64(mc.replaced))

	op := icetable.OpOverwrite
	switch {
	case kind == KindReplacePartitions:
		out[sumReplacePartition] = "true"
	case kind == KindRewrite:
		op = icetable.OpReplace
	case addDel.deleteFiles > 0 && addFiles == 0 && rm.dataFiles == 0:
		op = icetable.OpDelete // a row delta that only deletes rows (rowdelta.go)
	case addDel.deleteFiles > 0:
		op = icetable.OpOverwrite // a row delta that adds rows and deletes others (Java's BaseRowDelta)
	case len(del) == 0:
		op = icetable.OpAppend
	case addFiles == 0:
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
	total(sumTotalFiles, addFiles-rm.dataFiles)
	total(sumTotalRecords, addRows-rm.records)
	total(sumTotalSize, addSize-rm.size)
	total(sumTotalDeleteFiles, addDel.deleteFiles-rm.deleteFiles)
	total(sumTotalPositionDeletes, addDel.pos-rm.pos)
	total(sumTotalEqualityDeletes, addDel.eqs-rm.eqs)

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
