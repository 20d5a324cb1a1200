package faults

import (
	"context"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
)

// Catalog is a catalog.Catalog whose LoadTable and CommitTable go through
// an [Injector], and whose tables do their file IO through [WrapIO] with
// the same Injector. Every other method is the wrapped catalog's.
type Catalog struct {
	catalog.Catalog
	in *Injector
}

// WrapCatalog wraps cat.
func WrapCatalog(cat catalog.Catalog, in *Injector) *Catalog {
	return &Catalog{Catalog: cat, in: in}
}

var _ catalog.Catalog = (*Catalog)(nil)

// LoadTable loads the table; its commits and file IO go through the
// Injector.
func (c *Catalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := call(ctx, c.in, "catalog.load "+strings.Join(ident, "."), func() (*icetable.Table, error) {
		return c.Catalog.LoadTable(ctx, ident)
	})
	if err != nil {
		return nil, err
	}
	return c.wrap(tbl), nil
}

// CommitTable commits through the wrapped catalog. [ApplyThenFail] here is
// a commit that landed but whose answer was lost.
func (c *Catalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	type answer struct {
		md  icetable.Metadata
		loc string
	}
	a, err := call(ctx, c.in, "catalog.commit "+strings.Join(ident, "."), func() (answer, error) {
		md, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, ups)
		return answer{md, loc}, err
	})
	return a.md, a.loc, err
}

func (c *Catalog) wrap(tbl *icetable.Table) *icetable.Table {
	fsF := func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return WrapIO(ctx, fsys, c.in), nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, c)
}
