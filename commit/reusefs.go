package commit

import (
	"context"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// ReuseFS returns tbl with a file IO that is opened once and reused: the
// first (*icetable.Table).FS call opens it as tbl would, and every later
// call of the returned table, and of the tables built from it with its FS
// (the committed state of a replacement), returns the same IO. A table
// loaded from a catalog opens a new IO on every FS call; with S3 that is a
// new client, whose configuration (environment, shared config files, a CA
// bundle) is loaded and parsed again each time, and one commit makes
// several calls. A failed open is not kept: the next call tries again.
// cat is the catalog the returned table commits through.
func ReuseFS(tbl *icetable.Table, cat icetable.CatalogIO) *icetable.Table {
	var (
		mu   sync.Mutex
		fsys iceio.IO
	)
	fsF := func(ctx context.Context) (iceio.IO, error) {
		mu.Lock()
		defer mu.Unlock()
		if fsys != nil {
			return fsys, nil
		}
		f, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		fsys = f
		return f, nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, cat)
}
