package internal

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"

	"github.com/icerun/icerun/catalogconfig"
)

// CatalogName is the catalog name recorded in the embedded SQLite catalog.
const CatalogName = catalogconfig.LocalName

// OpenSQLite opens the embedded catalog in dir: [catalogconfig.OpenLocal].
func OpenSQLite(ctx context.Context, dir string) (catalog.Catalog, error) {
	return catalogconfig.OpenLocal(ctx, dir)
}

// SQLiteProps are the iceberg-go catalog properties of the embedded catalog
// in the absolute folder dir, for a catalog opened under another name (the
// interop suite gives every test's catalog its own name, which Spark
// needs): [catalogconfig.LocalProperties].
func SQLiteProps(dir string) iceberg.Properties {
	return catalogconfig.LocalProperties(dir)
}
