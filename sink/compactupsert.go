package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// DefaultCompactDeleteRatio is the share of a data file's rows that
// merge-on-read deletes must have deleted before the upsert mode
// rewrites the file (see [WithDeleteRatioCompaction]).
const DefaultCompactDeleteRatio = 0.2

// WithDeleteRatioCompaction sets when the upsert mode ([WithUpsert])
// rewrites a data file for its deletes: once its position delete file or
// deletion vector deletes at least ratio of its rows (0: any delete).
// Default [DefaultCompactDeleteRatio]. A ratio outside [0, 1] fails
// [Open] with [ErrBadOption].
//
// After each upsert commit the sink compacts the partitions the commit
// changed with the table's compaction ([table.Writer.Compact], policy
// [table.CompactFiles]): of each partition it rewrites only the data
// files that meet ratio, and its small files (under
// [WithSmallFileCompaction]'s size) once there are
// [WithSmallFileCompaction]'s number of them (default
// [DefaultCompactFiles]), into new files, and the snapshot removes
// exactly the files it read and their delete files.
// Files with few deletes, and full files without, are not read. So the
// data and delete files of a partition stay bounded over a long run, at
// a cost that follows the rows that changed, not the table.
func WithDeleteRatioCompaction(ratio float64) Option {
	return func(c *config) error {
		if !(ratio >= 0 && ratio <= 1) {
			return fmt.Errorf("%w: delete ratio compaction %v: want a ratio in [0, 1]", ErrBadOption, ratio)
		}
		c.compactRatio = ratio
		return nil
	}
}

// upsertPolicy is what the upsert mode compacts: the selected files of
// a partition, as [WithDeleteRatioCompaction] says.
func (s *Sink) upsertPolicy() table.CompactPolicy {
	return table.CompactPolicy{
		MinDeleteRatio: s.cfg.compactRatio,
		MinSmallFiles:  s.cfg.compactFiles,
		SmallFileBytes: s.cfg.compactSmall,
		Scope:          table.CompactFiles,
	}
}

// noteChanged records the partitions (canonical key texts) an upsert
// commit changed, for compactChanged.
func (s *Sink) noteChanged(keys []string) {
	for _, str := range keys {
		k, err := s.spec.Parse(str)
		if err != nil {
			continue // a partition of an older spec: nothing the table's compaction takes
		}
		if s.changed == nil {
			s.changed = map[partition.Key]bool{}
		}
		s.changed[k] = true
	}
}

// compactChanged compacts the partitions upsert commits changed since
// they were last compacted, by the upsert policy (the table's compaction
// decides on the partition's state whether anything needs folding). A
// partition whose compaction fails stays noted, to be tried again after
// the next commit; the failures are returned.
func (s *Sink) compactChanged(ctx context.Context) error {
	var errs []error
	for k := range s.changed {
		if k.SpecID() != s.spec.ID() {
			delete(s.changed, k) // the spec changed: the next commits note its keys
			continue
		}
		if _, err := s.compact(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.changed, k)
	}
	return errors.Join(errs...)
}
