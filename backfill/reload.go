package backfill

import (
	"context"
	"errors"
	"io/fs"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/table"
)

// reloadAttempts bounds the loads of [refresh].
const reloadAttempts = 10

// pruned reports whether err is a metadata.json that vanished while it was
// read: the catalog named it, and before the file was read another
// writer's commit deleted it as one of the old metadata files that
// Hygiene.PreviousVersionsMax prunes. Nothing was applied; loading the
// table again finds the newer file. With many workers committing to one
// table this is a race every long backfill meets.
func pruned(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// refresh loads the table through w, again when the metadata file it was
// pointed at was pruned before it could be read.
func refresh(ctx context.Context, w *table.Writer) (*icetable.Table, error) {
	var err error
	for range reloadAttempts {
		var tbl *icetable.Table
		if tbl, err = w.Refresh(ctx); err == nil || !pruned(err) || ctx.Err() != nil {
			return tbl, err
		}
	}
	return nil, err
}
