package table

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// CompactPolicy says which partitions [Writer.Compact] rewrites: those
// whose delete files delete at least MinDeleteRatio of their data files'
// rows, or that hold at least MinSmallFiles data files smaller than
// SmallFileBytes. A partition that meets neither is left as it is.
// Scope says what of a selected partition is rewritten.
type CompactPolicy struct {
	// MinDeleteRatio is the share of the partition's rows its delete
	// files must delete, in [0, 1]; 0 rewrites a partition with any live
	// delete file. With Scope [CompactFiles] it is the share of one data
	// file's rows.
	MinDeleteRatio float64
	// MinSmallFiles is the number of small data files that makes a
	// partition worth rewriting (at least 2: one file cannot be merged).
	MinSmallFiles int
	// SmallFileBytes is the size below which a data file is small; 0 is
	// three quarters of the table's write.target-file-size-bytes.
	SmallFileBytes int64
	// Scope is what a selected partition's compaction rewrites: the
	// whole partition ([CompactPartition], the zero value) or its
	// selected files ([CompactFiles]).
	Scope CompactScope
}

// CompactScope says what [Writer.Compact] rewrites of a partition its
// [CompactPolicy] selects.
type CompactScope int

const (
	// CompactPartition rewrites every data file of the partition, with
	// its delete files, into files of the target size. The default.
	CompactPartition CompactScope = iota
	// CompactFiles rewrites only the partition's data files whose delete
	// files delete at least MinDeleteRatio of the file's rows (deleted
	// rows counted from the record counts of its position delete files,
	// or its deletion vector's cardinality), and its small files once
	// there are MinSmallFiles of them, merged in size tiers: from the
	// smallest up, each small file no bigger than the smaller ones
	// together (a big file waits until the new ones add up to it). The
	// other data files and their delete files stay as they are, so the
	// cost follows what changed, not the partition's size. A partition
	// is selected when
	// one of its data files meets MinDeleteRatio or it holds
	// MinSmallFiles small files.
	CompactFiles
)

// DefaultCompactPolicy rewrites a partition with any delete file, or
// with 8 or more small files.
var DefaultCompactPolicy = CompactPolicy{MinDeleteRatio: 0, MinSmallFiles: 8}

// WithCompactPolicy sets the policy of [Writer.Compact]. Default
// [DefaultCompactPolicy].
func WithCompactPolicy(p CompactPolicy) Option {
	return func(c *config) error {
		if p.MinDeleteRatio < 0 || p.MinDeleteRatio > 1 || p.MinSmallFiles < 2 || p.SmallFileBytes < 0 || p.Scope < CompactPartition || p.Scope > CompactFiles {
			return fmt.Errorf("%w: compact policy %+v: want a delete ratio in [0, 1], at least 2 small files, a size >= 0, a known scope", ErrBadOption, p)
		}
		c.compact = &p
		return nil
	}
}

// compactPolicy is the writer's policy, defaults filled in for tbl.
func (c config) compactPolicy(tbl *icetable.Table) CompactPolicy {
	p := DefaultCompactPolicy
	if c.compact != nil {
		p = *c.compact
	}
	p.SmallFileBytes = p.SmallFileLimit(tbl)
	return p
}

// SmallFileLimit is the size below which a data file of tbl is small
// under p: SmallFileBytes, or when it is 0 three quarters of tbl's
// write.target-file-size-bytes.
func (p CompactPolicy) SmallFileLimit(tbl *icetable.Table) int64 {
	if p.SmallFileBytes > 0 {
		return p.SmallFileBytes
	}
	target := int64(tbl.Properties().GetInt(icetable.WriteTargetFileSizeBytesKey, icetable.WriteTargetFileSizeBytesDefault))
	return target * 3 / 4
}

// needs reports whether the partition whose data files are tasks is worth
// rewriting, and why.
func (p CompactPolicy) needs(tasks []icetable.FileScanTask) (bool, string) {
	if p.Scope == CompactFiles {
		sel, why := p.selectFiles(tasks)
		return sel != nil, why
	}
	var rows, deleted int64
	small := 0
	seen := map[string]bool{} // a delete file may apply to several data files
	for _, t := range tasks {
		rows += t.File.Count()
		if t.File.FileSizeBytes() < p.SmallFileBytes {
			small++
		}
		for _, d := range slices.Concat(t.DeleteFiles, t.DeletionVectorFiles, t.EqualityDeleteFiles) {
			id := d.FilePath()
			if off := d.ContentOffset(); off != nil {
				id += fmt.Sprintf("#%d", *off)
			}
			if !seen[id] {
				seen[id] = true
				deleted += d.Count()
			}
		}
	}
	deletes := len(seen)
	switch {
	case deletes > 0 && (p.MinDeleteRatio == 0 || rows > 0 && float64(deleted)/float64(rows) >= p.MinDeleteRatio):
		return true, fmt.Sprintf("%d delete files (%d of %d rows deleted)", deletes, deleted, rows)
	case small >= p.MinSmallFiles:
		return true, fmt.Sprintf("%d small data files", small)
	}
	return false, ""
}

// deleteID names a delete file of a task: its path, and for a deletion
// vector the offset of its blob (one Puffin file holds several).
func deleteID(d iceberg.DataFile) string {
	if off := d.ContentOffset(); off != nil {
		return fmt.Sprintf("%s#%d", d.FilePath(), *off)
	}
	return d.FilePath()
}

// taskDeletes are the row-level delete files iceberg-go's scan attached
// to t.
func taskDeletes(t icetable.FileScanTask) []iceberg.DataFile {
	return slices.Concat(t.DeleteFiles, t.DeletionVectorFiles, t.EqualityDeleteFiles)
}

// fileDeleted is how many rows of t's data file its delete files delete,
// at most: the record counts of its position delete files and deletion
// vector (a position delete file of the whole partition counts in full
// for each data file it is attached to, and an equality delete file
// too: it may delete all of them).
func fileDeleted(t icetable.FileScanTask) int64 {
	var n int64
	for _, d := range taskDeletes(t) {
		n += d.Count()
	}
	return min(n, t.File.Count())
}

// selectFiles picks the data files of a partition (tasks) that
// [CompactFiles] rewrites, and says why; nil when there is nothing to
// fold: no file meets MinDeleteRatio and fewer than MinSmallFiles are
// small, or the pick is one file without deletes.
func (p CompactPolicy) selectFiles(tasks []icetable.FileScanTask) ([]icetable.FileScanTask, string) {
	var heavy, small []icetable.FileScanTask
	var deleted, rows int64
	smallFiles := 0
	for _, t := range tasks {
		d := fileDeleted(t)
		isSmall := t.File.FileSizeBytes() < p.SmallFileBytes
		if isSmall {
			smallFiles++
		}
		switch {
		case d > 0 && (p.MinDeleteRatio == 0 || float64(d)/float64(max(t.File.Count(), 1)) >= p.MinDeleteRatio):
			heavy = append(heavy, t)
			deleted, rows = deleted+d, rows+t.File.Count()
		case isSmall:
			small = append(small, t)
		}
	}
	sel := heavy
	if smallFiles >= p.MinSmallFiles {
		small = sizeTier(small)
		sel = append(sel, small...)
	} else {
		small = nil
	}
	if len(sel) == 0 || len(sel) == 1 && len(taskDeletes(sel[0])) == 0 {
		return nil, ""
	}
	return sel, fmt.Sprintf("%d data files with deletes (%d of %d rows deleted), %d small data files", len(heavy), deleted, rows, len(small))
}

// sizeTier is the part of the small files a [CompactFiles] rewrite
// merges: from the smallest up, each file no bigger than the ones before
// it together (the first two always). So a merge at least doubles the
// biggest file it reads, and a row is rewritten for being in a small
// file a number of times logarithmic in the bytes written after it,
// not once per compaction: a file already holding most of the
// partition's rows waits until the new ones add up to its size.
func sizeTier(small []icetable.FileScanTask) []icetable.FileScanTask {
	slices.SortStableFunc(small, func(a, b icetable.FileScanTask) int {
		return cmp.Compare(a.File.FileSizeBytes(), b.File.FileSizeBytes())
	})
	var sum int64
	for i, t := range small {
		if i >= 2 && t.File.FileSizeBytes() > sum {
			return small[:i]
		}
		sum += t.File.FileSizeBytes()
	}
	return small
}

// rewritten are the live files of a partition a rewrite of sel (some of
// the partition's data files, all being tasks) removes: sel's data
// files, and the delete files that apply to nothing else: those scoped
// to one of them (a deletion vector, a file-scoped position delete
// file) and those the scan attached to rewritten data files only. A
// delete file that also applies to a data file that stays, stays: its
// positions in the rewritten files then name rows of files no longer in
// the table, and its equality deletes apply to no newer row.
func rewritten(tasks, sel []icetable.FileScanTask) []iceberg.DataFile {
	out := make([]iceberg.DataFile, 0, 2*len(sel))
	gone := make(map[string]bool, len(sel))
	for _, t := range sel {
		gone[t.File.FilePath()] = true
		out = append(out, t.File)
	}
	stays := map[string]bool{}
	for _, t := range tasks {
		if gone[t.File.FilePath()] {
			continue
		}
		for _, d := range taskDeletes(t) {
			if ref := d.ReferencedDataFile(); ref == nil || !gone[*ref] {
				stays[deleteID(d)] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, t := range sel {
		for _, d := range taskDeletes(t) {
			id := deleteID(d)
			if ref := d.ReferencedDataFile(); (ref != nil && gone[*ref] || !stays[id]) && !seen[id] {
				seen[id] = true
				out = append(out, d)
			}
		}
	}
	return out
}
