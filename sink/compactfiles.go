package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/partition"
)

// DefaultCompactFiles is the number of small data files the sink commits
// to a table partition before it compacts the partition (see
// [WithSmallFileCompaction]).
const DefaultCompactFiles = 16

// WithSmallFileCompaction compacts a table partition ([Sink.Compact])
// after the commit that brings the small data files the sink committed
// to it since it last compacted it to files; a data file is small below
// smallFileBytes (0: three quarters of the table's
// write.target-file-size-bytes, as the table's compaction says). So a
// stream's file count stays bounded as it goes, in every partition it
// appends to: an unpartitioned table, a stream without event time, or a
// partition still open, not only when the watermark closes a partition
// ([WithEventTime]). Each compaction rewrites the partition's small
// files into one (files at the target size are left alone), so a
// partition holds at most about files small files plus its full ones
// (after a restart, up to files more: the count starts again at 0).
// Default: [DefaultCompactFiles], 0. Files must be at least 2 and
// smallFileBytes not negative, else [Open] fails with [ErrBadOption].
//
// In keyed mode ([WithKey]) the sink reads the keys of the compacted file
// at its next commit, as it reads the files other writers add: a cost
// below the compaction's own, which read those rows in full.
func WithSmallFileCompaction(files int, smallFileBytes int64) Option {
	return func(c *config) error {
		if files < 2 || smallFileBytes < 0 {
			return fmt.Errorf("%w: small file compaction: %d files under %d bytes: want at least 2 files and a size >= 0", ErrBadOption, files, smallFileBytes)
		}
		c.compactFiles, c.compactSmall = files, smallFileBytes
		return nil
	}
}

// smallFileBytes is the size below which a data file counts as small.
func (s *Sink) smallFileBytes() int64 { return s.compactPolicy().SmallFileLimit(s.tbl) }

// noteSmall counts the small files among files, just committed, by
// table partition, for compactSmall.
func (s *Sink) noteSmall(files []iceberg.DataFile) {
	limit := s.smallFileBytes()
	for _, f := range files {
		if f.FileSizeBytes() >= limit {
			continue
		}
		k, err := s.spec.KeyFromValues(f.Partition())
		if err != nil {
			continue
		}
		if s.small == nil {
			s.small = map[partition.Key]int{}
		}
		s.small[k]++
	}
}

// compactSmall compacts the partitions the sink committed
// [WithSmallFileCompaction]'s number of small files to since it last
// compacted them. A partition whose compaction fails keeps its count, to
// be tried again after the next commit; the failures are returned.
func (s *Sink) compactSmall(ctx context.Context) error {
	var errs []error
	for k, n := range s.small {
		if n < s.cfg.compactFiles {
			continue
		}
		if _, err := s.compact(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.small, k)
	}
	return errors.Join(errs...)
}
