package backfill

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/icerun/icerun/table"
)

// Expire expires the snapshots of w's table that are older than olderThan
// and not among the last retainLast of main's ancestry, and removes the
// files only they referenced, as the hygiene does: the latest write of
// every partition the expired snapshots made is kept in icerun's lineage
// checkpoint, so resuming, Unchanged and history keep working. A
// concurrent commit is retried on the fresh table state. retainLast must
// be at least 1 and olderThan not negative ([ErrBadOption]).
func Expire(ctx context.Context, w *table.Writer, retainLast int, olderThan time.Duration) error {
	if retainLast < 1 || olderThan < 0 {
		return fmt.Errorf("%w: expire retaining %d snapshots older than %s", ErrBadOption, retainLast, olderThan)
	}
	start, before := time.Now(), len(w.Table().Metadata().Snapshots())
	err := expire(ctx, w, retainLast, olderThan)
	name := strings.Join(w.Table().Identifier(), ".")
	if err != nil {
		err = fmt.Errorf("backfill: expire snapshots of %s: %w", name, err)
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelError
	}
	after := len(w.Table().Metadata().Snapshots())
	attrs := []slog.Attr{slog.String("table", name), slog.Int("retain_last", retainLast), slog.Duration("older_than", olderThan),
		slog.Int("snapshots_before", before), slog.Int("snapshots_after", after), slog.Duration("duration", time.Since(start))}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	w.Logger().LogAttrs(ctx, level, "icerun expire", attrs...)
	return err
}
