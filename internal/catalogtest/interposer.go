package catalogtest

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// Interposer is a catalog that runs Before once, on its first CommitTable,
// before passing the commit on: a change another writer makes between the
// planning of a commit and its arrival at the catalog (the commit then
// loses the race, or meets the change). Not safe for concurrent use.
type Interposer struct {
	catalog.Catalog
	Before func()
}

// CommitTable runs Before the first time, then commits through the wrapped
// catalog.
func (c *Interposer) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if f := c.Before; f != nil {
		c.Before = nil
		f()
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}
