//go:build icerun_glue

package main

// The native AWS Glue catalog client (type: glue) is linked only with
// -tags icerun_glue: it adds 13.8 MB to the binary, and Glue's Iceberg
// REST endpoint (type rest with SigV4) serves the same tables without it.
// See docs/cli.md, "Binary size".
import _ "github.com/apache/iceberg-go/catalog/glue"
