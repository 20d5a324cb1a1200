package catalogconfig

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// LocalName is the catalog name of the embedded catalog ([OpenLocal]). It
// is recorded in the catalog's iceberg_tables.catalog_name column: another
// engine (Spark's JdbcCatalog) sees icerun's tables only under this name.
const LocalName = "icerun"

// DefaultWarehouse is the folder of the embedded catalog when none is
// given (cmd/icerun's default).
const DefaultWarehouse = "./warehouse"

// OpenLocal opens (creating when missing) the embedded catalog: an
// iceberg-go SQL catalog stored in dir/catalog.db, with table data under
// dir. Several processes may open the same dir at once; SQLite serialises
// their commits (WAL journal, busy timeout of 30 s).
func OpenLocal(ctx context.Context, dir string) (catalog.Catalog, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("catalogconfig: open local warehouse %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("catalogconfig: open local warehouse %q: %w", dir, err)
	}
	cat, err := catalog.Load(ctx, LocalName, LocalProperties(abs))
	if err != nil {
		return nil, fmt.Errorf("catalogconfig: open local warehouse %q: %w", dir, err)
	}
	return cat, nil
}

// LocalProperties are the iceberg-go catalog properties of the embedded
// catalog in the absolute folder dir (dir/catalog.db, table data under
// dir), for opening it under another catalog name.
func LocalProperties(dir string) iceberg.Properties {
	// A URI: '%', '?' and '#' in the folder name must be escaped.
	dsn := "file:" + (&url.URL{Path: filepath.Join(dir, "catalog.db")}).EscapedPath() +
		"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate"
	return iceberg.Properties{
		"type":                "sql",
		"uri":                 dsn,
		sqlcat.DialectKey:     string(sqlcat.SQLite),
		sqlcat.DriverKey:      sqliteshim.ShimName,
		"warehouse":           "file://" + dir,
		"init_catalog_tables": "true",
	}
}
