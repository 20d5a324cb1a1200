package enginestest

import "path/filepath"

// SparkJDBC is Spark's configuration of a SQL catalog (Java's JdbcCatalog
// with the V1 schema iceberg-go writes, uncached, so that every query sees
// the catalog's current metadata) at the JDBC uri, with warehouse.
func SparkJDBC(uri, warehouse string) map[string]string {
	return map[string]string{
		"catalog-impl":        "org.apache.iceberg.jdbc.JdbcCatalog",
		"jdbc.schema-version": "V1",
		"cache-enabled":       "false",
		"uri":                 uri,
		"warehouse":           warehouse,
	}
}

// LocalCatalog is the configuration, for Spark and for PyIceberg, of the
// embedded SQLite catalog in the absolute folder dir
// ([github.com/icerun/icerun/catalogconfig.LocalProperties]: dir/catalog.db,
// the warehouse dir). [Engines.Configure] it under the name its tables were
// created with ([github.com/icerun/icerun/catalogconfig.LocalName] for a
// catalog opened by OpenLocal, as `icerun -warehouse` opens it).
func LocalCatalog(dir string) (spark, py map[string]string) {
	file := filepath.Join(dir, "catalog.db")
	warehouse := "file://" + dir
	return SparkJDBC("jdbc:sqlite:"+file, warehouse), map[string]string{"uri": "sqlite:///" + file, "warehouse": warehouse}
}
