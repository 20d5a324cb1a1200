package backfill

import (
	"context"
	"fmt"
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
	if err := expire(ctx, w, retainLast, olderThan); err != nil {
		return fmt.Errorf("backfill: expire snapshots of %s: %w", w.Table().Identifier(), err)
	}
	return nil
}
