// Package catalogconfig opens Iceberg catalogs the way PyIceberg users
// configure them: named catalogs in a YAML file and in environment
// variables, each a set of iceberg-go catalog properties. It also opens
// icerun's embedded default, a SQLite catalog in a local folder
// ([OpenLocal]), from any program.
//
// # The config file
//
// [Load] reads the file named by $ICERUN_CONFIG, or ~/.icerun.yaml when
// that variable is unset (a missing ~/.icerun.yaml is no error). Its shape
// is PyIceberg's .pyiceberg.yaml:
//
//	catalog:
//	  prod:
//	    type: sql
//	    uri: postgres://etl@db.internal:5432/iceberg?sslmode=verify-full
//	    warehouse: s3://my-bucket/warehouse
//	    s3.region: eu-west-1
//	  dev:
//	    type: local
//	    warehouse: ./warehouse
//
// Every key under a catalog is an iceberg-go catalog property (type, uri,
// warehouse, credential, token, s3.*, sql.dialect, sql.driver, ...). A
// nested map is flattened with dots: {s3: {region: x}} is s3.region.
//
// # Environment variables
//
// ICERUN_CATALOG__<NAME>__<KEY>=value sets property KEY of catalog NAME,
// overriding the file. The rule is PyIceberg's (PYICEBERG_CATALOG__...):
// the variable name is lowercased and split at the first two double
// underscores; in NAME and KEY a double underscore becomes "." and a
// single underscore "-". So ICERUN_CATALOG__PROD__S3__ACCESS_KEY_ID sets
// s3.access-key-id of catalog prod. A key that holds an underscore itself
// (iceberg-go's init_catalog_tables) cannot be spelled this way; put it in
// the file (icerun sets it for SQL catalogs, see below).
//
// # What Open adds
//
//   - type "local" opens the embedded catalog of [OpenLocal] in the
//     folder the warehouse property names.
//   - a SQL catalog (type sql, or no type and a postgres:// or
//     postgresql:// uri) without sql.driver gets bun's pgdriver ("pg") and
//     the postgres dialect for postgres:// uris, and the pure-Go SQLite
//     driver and dialect for file: uris; init_catalog_tables defaults to
//     true. This package links those two drivers and the SQL and REST
//     catalogs. A program that needs Glue or S3 file IO imports
//     github.com/apache/iceberg-go/catalog/glue and
//     github.com/apache/iceberg-go/io/gocloud/s3 (cmd/icerun links S3,
//     and Glue when built with -tags icerun_glue).
//
// Secrets (credential, token, passwords, secret keys, the password in a
// uri) never appear in this package's errors: they are replaced by "***"
// (see [Redact]).
package catalogconfig
