package sink

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/table"
)

// compactPolicy is what the sink compacts: a partition of two or more
// small data files (under [WithSmallFileCompaction]'s size), or with any
// row-level delete file; in upsert mode the selected files of a
// partition (upsertPolicy).
func (s *Sink) compactPolicy() table.CompactPolicy {
	if s.cfg.upsert != nil {
		return s.upsertPolicy()
	}
	return table.CompactPolicy{MinDeleteRatio: 0, MinSmallFiles: 2, SmallFileBytes: s.cfg.compactSmall}
}

// writer is the table writer the sink runs the table's operations through
// (its compaction and snapshot expiry), opened on first use with the
// sink's retry policy, commit lock, logger and lineage, so that they take
// the same commit turns as the sink's appends.
func (s *Sink) writer(ctx context.Context) (*table.Writer, error) {
	if s.tw != nil {
		return s.tw, nil
	}
	opts := []table.Option{table.WithRetry(s.cfg.policy), table.WithLogger(s.cfg.log), table.WithCompactPolicy(s.compactPolicy())}
	if s.cfg.lock != nil {
		opts = append(opts, table.WithCommitLock(s.cfg.lock))
	}
	if s.cfg.runID != "" {
		opts = append(opts, table.WithRunID(s.cfg.runID))
	}
	if s.cfg.codeVersion != "" {
		opts = append(opts, table.WithCodeVersion(s.cfg.codeVersion))
	}
	if s.cfg.meterProvider != nil {
		opts = append(opts, table.WithMeterProvider(s.cfg.meterProvider))
	}
	w, err := table.Open(ctx, s.cat, s.ident, opts...)
	if err != nil {
		return nil, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	s.tw = w
	return w, nil
}
