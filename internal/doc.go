// Package internal holds code private to the icerun module: the embedded
// SQLite catalog that examples and tests use ([OpenSQLite]), and helpers
// shared by the public packages. Its subpackages: snapshotcommit (the
// commit engine package table drives), fingerprint (input fingerprints),
// pagecodec (the Parquet page codec), writeprops (the table properties and
// sort orders the data file writers can take, for table and sink) and
// catalogtest (test fixtures).
package internal
