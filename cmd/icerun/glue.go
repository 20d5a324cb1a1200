//go:build !icerun_noglue

package main

// The AWS Glue catalog (type: glue), linked unless built with
// -tags icerun_noglue (see docs/cli.md, "Binary size").
import _ "github.com/apache/iceberg-go/catalog/glue"
