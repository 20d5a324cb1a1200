// Package internal holds code private to the icerun module: the embedded
// SQLite catalog that examples and tests use ([OpenSQLite]), and helpers
// shared by the public packages.
package internal
