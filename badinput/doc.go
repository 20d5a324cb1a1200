// Package badinput holds icerun's bad-input matrix: table tests that feed a
// replacement malformed keys, rows outside the key, wrong types, nulls, NaN,
// hostile key values, failing readers, cancelled contexts, an unreachable
// catalog, a read-only warehouse and a table changed under the writer, and
// assert for each a typed error, an unchanged table and no orphan files.
// It has no code of its own: see badinput_test.go.
package badinput
