package commit

import (
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Iceberg's standard snapshot summary properties.
const (
	sumAddedFiles     = "added-data-files"
	sumAddedRecords   = "added-records"
	sumAddedSize      = "added-files-size"
	sumDeletedFiles   = "deleted-data-files"
	sumDeletedRecords = "deleted-records"
	sumRemovedSize    = "removed-files-size"
	sumChangedParts   = "changed-partition-count"
	sumTotalFiles     = "total-data-files"
	sumTotalRecords   = "total-records"
	sumTotalSize      = "total-files-size"
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

// summary is the snapshot summary of a commit that adds the data files
// add and removes the files del (data and delete files): icerun's lineage
// props, the added and removed counts, and the table totals carried from
// the parent (each omitted when the parent does not state it).
func (p *producer) summary(props iceberg.Properties, add, del []iceberg.DataFile) *icetable.Summary {
	out := iceberg.Properties{}
	for k, v := range props {
		out[k] = v
	}
	var addRows, addSize int64
	var rm removal
	parts := map[string]bool{}
	for _, f := range add {
		addRows += f.Count()
		addSize += f.FileSizeBytes()
		parts[p.partitionOf(f)] = true
	}
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
	op := icetable.OpAppend
	if len(add) > 0 {
		set(sumAddedFiles, int64(len(add)))
		set(sumAddedRecords, addRows)
		set(sumAddedSize, addSize)
	}
	if len(del) > 0 {
		op = icetable.OpOverwrite
		if len(add) == 0 {
			op = icetable.OpDelete // an emptied partition
		}
		setIf(sumDeletedFiles, rm.dataFiles)
		setIf(sumDeletedRecords, rm.records)
		set(sumRemovedSize, rm.size)
		setIf(sumRemovedDeleteFiles, rm.deleteFiles)
		setIf(sumRemovedPosFiles, rm.posFiles)
		setIf(sumRemovedDVs, rm.dvs)
		setIf(sumRemovedEqFiles, rm.eqFiles)
		setIf(sumRemovedPosDeletes, rm.pos)
		setIf(sumRemovedEqDeletes, rm.eqs)
	}
	set(sumChangedParts, int64(len(parts)))

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
		if v, err := strconv.ParseInt(parent[k], 10, 64); err == nil {
			set(k, v+delta)
		}
	}
	total(sumTotalFiles, int64(len(add))-rm.dataFiles)
	total(sumTotalRecords, addRows-rm.records)
	total(sumTotalSize, addSize-rm.size)
	total(sumTotalDeleteFiles, -rm.deleteFiles)
	total(sumTotalPositionDeletes, -rm.pos)
	total(sumTotalEqualityDeletes, -rm.eqs)

	return &icetable.Summary{Operation: op, Properties: out}
}

// partitionOf names f's partition for counting changed partitions.
func (p *producer) partitionOf(f iceberg.DataFile) string {
	id := strconv.Itoa(int(f.SpecID()))
	if s := p.spec(f.SpecID()); s != nil {
		if k, err := s.KeyFromValues(f.Partition()); err == nil {
			return id + ":" + k.String()
		}
	}

	return id + ":" + f.FilePath()
}
