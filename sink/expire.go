package sink

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/table"
)

// expire runs the snapshot expiry of WithSnapshotExpiry when it is due.
func (s *Sink) expire(ctx context.Context) error {
	if s.cfg.expireEvery == 0 || s.stats.Commits%s.cfg.expireEvery != 0 {
		return nil
	}
	w, err := table.Open(ctx, s.cat, s.ident)
	if err != nil {
		return fmt.Errorf("sink: expire %s: %w", s.name, err)
	}
	if err := backfill.Expire(ctx, w, s.cfg.expireRetain, s.cfg.expireOlder); err != nil {
		return fmt.Errorf("sink: expire %s: %w", s.name, err)
	}
	s.cfg.log.Info("sink snapshot expiry", slog.String("table", s.name), slog.Int("retain_last", s.cfg.expireRetain))
	return s.load(ctx)
}
