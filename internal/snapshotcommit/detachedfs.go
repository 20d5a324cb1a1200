package snapshotcommit

import (
	"context"

	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// DetachedFS is tbl's file IO for a table built from tbl (icetable.New):
// it resolves tbl's IO once and holds only that. The method value tbl.FS
// would hold a copy of tbl, its metadata included, so that each table
// built from the last one committed kept every earlier version alive: a
// sink committing every second without expiry held 463 MB of old
// metadata after 600 commits, growing with the square of the commits.
func DetachedFS(ctx context.Context, tbl *icetable.Table) icetable.FSysF {
	fsys, err := tbl.FS(context.WithoutCancel(ctx))
	return func(context.Context) (iceio.IO, error) { return fsys, err }
}
