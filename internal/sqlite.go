package internal

import (
	"context"

	"github.com/apache/iceberg-go/catalog"

	"github.com/icerun/icerun/catalogconfig"
)

// CatalogName is the catalog name recorded in the embedded SQLite catalog.
const CatalogName = catalogconfig.LocalName

// OpenSQLite opens the embedded catalog in dir: [catalogconfig.OpenLocal].
func OpenSQLite(ctx context.Context, dir string) (catalog.Catalog, error) {
	return catalogconfig.OpenLocal(ctx, dir)
}
