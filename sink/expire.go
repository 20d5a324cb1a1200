package sink

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
)

// expire runs the snapshot expiry of WithSnapshotExpiry when it is due.
func (s *Sink) expire(ctx context.Context) error {
	if s.cfg.expireEvery == 0 || s.stats.Commits%s.cfg.expireEvery != 0 {
		return nil
	}
	w, err := s.writer(ctx) // under the sink's commit lock, as its appends
	if err != nil {
		return fmt.Errorf("sink: expire %s: %w", s.name, err)
	}
	if err := backfill.Expire(ctx, w, s.cfg.expireRetain, s.cfg.expireOlder); err != nil {
		return fmt.Errorf("sink: expire %s: %w", s.name, err)
	}
	s.cfg.log.Info("sink snapshot expiry", slog.String("table", s.name), slog.Int("retain_last", s.cfg.expireRetain))
	return s.refresh(ctx, nil)
}

// metadataPruning adds to props, when the sink expires snapshots and the
// table sets neither property itself, write.metadata.delete-after-commit
// .enabled=true and write.metadata.previous-versions-max (the snapshots
// the sink keeps, at least [minPreviousVersions]). Every commit writes a
// new metadata.json: without them a stream committing every second
// leaves 86,400 of them a day, and the metadata log (100 entries by
// default, in every one) weighs as much as the retained snapshots. With
// them every commit deletes the files that fall out of the log. They are
// set in the sink's own commit; a table that sets either keeps its
// values.
func (s *Sink) metadataPruning(md icetable.Metadata, props iceberg.Properties) {
	if s.cfg.expireRetain == 0 {
		return
	}
	have := md.Properties()
	if _, ok := have[icetable.MetadataDeleteAfterCommitEnabledKey]; ok {
		return
	}
	if _, ok := have[icetable.MetadataPreviousVersionsMaxKey]; ok {
		return
	}
	props[icetable.MetadataDeleteAfterCommitEnabledKey] = "true"
	props[icetable.MetadataPreviousVersionsMaxKey] = strconv.Itoa(max(s.cfg.expireRetain, minPreviousVersions))
}

// minPreviousVersions is the shortest metadata log the sink sets: a
// reader or committer that looked the table up a few commits ago still
// finds the metadata file it was pointed at.
const minPreviousVersions = 10
