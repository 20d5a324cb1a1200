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

// carried are the totals a data-only commit leaves as its parent had them.
var carried = []string{"total-delete-files", "total-position-deletes", "total-equality-deletes"}

// summary is the snapshot summary of a commit that adds add and deletes
// del: icerun's lineage props, the added and deleted counts, and the
// table totals carried from the parent (each omitted when the parent
// does not state it).
func (p *producer) summary(props iceberg.Properties, add, del []iceberg.DataFile) *icetable.Summary {
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
		set(sumDeletedFiles, int64(len(del)))
		set(sumDeletedRecords, delRows)
		set(sumRemovedSize, delSize)
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
	total(sumTotalFiles, int64(len(add)-len(del)))
	total(sumTotalRecords, addRows-delRows)
	total(sumTotalSize, addSize-delSize)
	for _, k := range carried {
		total(k, 0)
	}

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
