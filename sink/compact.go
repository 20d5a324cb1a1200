package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// Key parses a canonical partition key of the table's current spec, such
// as "event_day=2026-07-14", for [Sink.Compact].
func (s *Sink) Key(str string) (partition.Key, error) {
	k, err := s.spec.Parse(str)
	if err != nil {
		return partition.Key{}, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	return k, nil
}

// Compact compacts table partition key with the table's compaction
// ([table.Writer.Compact], under the sink's retry policy, commit lock and
// lineage): when the partition holds two or more small data files, or
// any row-level delete file, its live rows are rewritten into files of
// the table's target size, read back and checked against the rows read
// (their count and a sum of row hashes, in any order), and committed in
// one snapshot that removes exactly the data and delete files it read.
// When another writer changes the partition meanwhile (an append, a
// merge-on-read delete or upsert, another compaction), nothing of this
// attempt is committed and the partition is planned again on the new
// state: a concurrent delete is never undone nor a new row dropped. A
// partition with nothing to fold is left as it is (Unchanged, no
// snapshot). In upsert mode ([WithUpsert]) the selected files of the
// partition are rewritten instead of all of them, as
// [WithDeleteRatioCompaction] says. Compaction snapshots carry no positions (the sink reads its
// positions from the newest snapshot that records them) and leave the
// sink's pending rows and their fence as they were.
//
// With [WithEventTime], the sink compacts each partition it appended to
// once the watermark passes the partition's end, after the commit that saw
// it pass.
func (s *Sink) Compact(ctx context.Context, key partition.Key) (commit.Result, error) {
	if s.closed {
		return commit.Result{}, ErrClosed
	}
	res, err := s.compact(ctx, key)
	if err != nil {
		return res, err
	}
	return res, s.refresh(ctx, nil)
}

// compact runs the table's compaction of partition k.
func (s *Sink) compact(ctx context.Context, k partition.Key) (commit.Result, error) {
	w, err := s.writer(ctx)
	if err != nil {
		return commit.Result{}, err
	}
	res, err := w.Compact(ctx, k)
	if err != nil {
		return res, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if !res.Unchanged {
		s.stats.Compactions++
		s.meters.add(ctx, s.stats)
		s.planOnLast = false // the compaction committed past s.tbl
		s.cfg.log.Info("sink compaction", slog.String("table", s.name), slog.String("partition", k.String()),
			slog.Int("files_removed", res.DeletedFiles), slog.Int("files_added", res.AddedFiles),
			slog.Int64("rows", res.AddedRows), slog.Int64("snapshot", res.SnapshotID))
	}
	return res, nil
}

// compactClosed compacts the partitions the sink appended to whose window
// the watermark (the highest event time the table records, minus the
// lateness) has passed. A partition whose compaction fails stays open, to
// be tried again after the next commit; the failures are returned.
func (s *Sink) compactClosed(ctx context.Context) error {
	maxSeen := int64(math.MinInt64)
	for _, m := range s.committed {
		maxSeen = max(maxSeen, m.MaxEventTime)
	}
	var errs []error
	for k, end := range s.open {
		if !s.clock.closed(end, maxSeen) {
			continue
		}
		if _, err := s.compact(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(s.open, k)
		if s.keys != nil {
			s.keys.close(k)
		}
	}
	return errors.Join(errs...)
}

// noteOpen records the partitions of files, just committed, with the end of
// their window, for compactClosed.
func (s *Sink) noteOpen(files []iceberg.DataFile) {
	if s.clock == nil || s.clock.windowEnd == nil {
		return
	}
	for _, f := range files {
		k, err := s.spec.KeyFromValues(f.Partition())
		if err != nil {
			continue
		}
		if end, ok := s.clock.windowEnd(f.Partition()); ok {
			if s.open == nil {
				s.open = map[partition.Key]int64{}
			}
			s.open[k] = end
		}
	}
}
