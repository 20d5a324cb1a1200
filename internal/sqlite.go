package internal

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

// CatalogName is the catalog name recorded in the embedded SQLite catalog.
const CatalogName = "icerun"

// OpenSQLite opens (creating when missing) the embedded catalog: an
// iceberg-go SQL catalog stored in dir/catalog.db, with table data under
// dir. Several processes may open the same dir at once; SQLite serialises
// their commits (WAL journal, busy timeout of 30 s).
func OpenSQLite(ctx context.Context, dir string) (catalog.Catalog, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("icerun: warehouse %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("icerun: warehouse %q: %w", dir, err)
	}
	return catalog.Load(ctx, CatalogName, SQLiteProps(abs))
}

// SQLiteProps are the iceberg-go catalog properties of the embedded catalog
// in the absolute folder dir (dir/catalog.db, table data under dir), for a
// catalog opened under another name (the interop suite gives every test's
// catalog its own name, which Spark needs).
func SQLiteProps(dir string) iceberg.Properties {
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
