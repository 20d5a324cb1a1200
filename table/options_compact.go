package table

import (
	"fmt"
	"slices"

	icetable "github.com/apache/iceberg-go/table"
)

// CompactPolicy says which partitions [Writer.Compact] rewrites: those
// whose delete files delete at least MinDeleteRatio of their data files'
// rows, or that hold at least MinSmallFiles data files smaller than
// SmallFileBytes. A partition that meets neither is left as it is.
type CompactPolicy struct {
	// MinDeleteRatio is the share of the partition's rows its delete
	// files must delete, in [0, 1]; 0 rewrites a partition with any live
	// delete file.
	MinDeleteRatio float64
	// MinSmallFiles is the number of small data files that makes a
	// partition worth rewriting (at least 2: one file cannot be merged).
	MinSmallFiles int
	// SmallFileBytes is the size below which a data file is small; 0 is
	// three quarters of the table's write.target-file-size-bytes.
	SmallFileBytes int64
}

// DefaultCompactPolicy rewrites a partition with any delete file, or
// with 8 or more small files.
var DefaultCompactPolicy = CompactPolicy{MinDeleteRatio: 0, MinSmallFiles: 8}

// WithCompactPolicy sets the policy of [Writer.Compact]. Default
// [DefaultCompactPolicy].
func WithCompactPolicy(p CompactPolicy) Option {
	return func(c *config) error {
		if p.MinDeleteRatio < 0 || p.MinDeleteRatio > 1 || p.MinSmallFiles < 2 || p.SmallFileBytes < 0 {
			return fmt.Errorf("%w: compact policy %+v: want a delete ratio in [0, 1], at least 2 small files, a size >= 0", ErrBadOption, p)
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
