// Package icerun makes Apache Iceberg writes safe to re-run. The API lives
// in the sub-packages: [github.com/icerun/icerun/table] is the entry point.
package icerun
