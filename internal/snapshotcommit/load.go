package snapshotcommit

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// loadAttempts bounds the loads of [Load].
const loadAttempts = 10

// Load loads the table ident, again when the metadata file the catalog
// named was deleted before it could be read: with
// write.metadata.delete-after-commit (the sink's and the backfill's
// metadata pruning) other writers' commits can move the table past that
// file and prune it between the catalog's lookup and the read (a process
// paused there, or a busy table with a short metadata log). Loading again
// finds the newer file.
func Load(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) (*icetable.Table, error) {
	var err error
	for range loadAttempts {
		var tbl *icetable.Table
		if tbl, err = cat.LoadTable(ctx, ident); err == nil || !prunedUnderCommit(err) || ctx.Err() != nil {
			return tbl, err
		}
	}
	return nil, err
}
