// Package awsconfig parses the AWS configuration of a catalog's S3
// properties once, for every table load and file operation of a run.
//
// iceberg-go opens a new S3 client for every table load and every
// Table.FS call, and each one loads the AWS configuration again (the SDK's
// default chain: environment, shared files and, when AWS_CA_BUNDLE is set,
// a parse of the whole certificate bundle). In a backfill worker that
// commits several keys a second this was a third of its CPU. iceberg-go
// takes a configuration from the context instead when one is there
// (utils.WithAwsConfig); [Context] parses the catalog's once and puts it
// there. The S3 properties (region, endpoint, keys) still apply on top of
// it, as iceberg-go applies them to a configuration it loads itself, and
// each operation keeps its own context for cancellation.
package awsconfig

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/io/gocloud/s3"
	"github.com/apache/iceberg-go/utils"
)

// Context returns ctx carrying the AWS configuration of props, a
// catalog's properties, parsed once; ctx itself when the catalog has no
// S3 warehouse or s3.* property, or when ctx already carries one.
func Context(ctx context.Context, props iceberg.Properties) (context.Context, error) {
	if utils.GetAwsConfig(ctx) != nil || !usesS3(props) {
		return ctx, nil
	}
	cfg, err := s3.ParseAWSConfig(ctx, props)
	if err != nil {
		return ctx, fmt.Errorf("awsconfig: %w", err)
	}
	return utils.WithAwsConfig(ctx, cfg), nil
}

func usesS3(props iceberg.Properties) bool {
	if w := props["warehouse"]; strings.HasPrefix(w, "s3://") || strings.HasPrefix(w, "s3a://") {
		return true
	}
	for k := range props {
		if strings.HasPrefix(k, "s3.") {
			return true
		}
	}
	return false
}
