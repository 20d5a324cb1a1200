//go:build interop

package interop

import (
	"os"
	"testing"

	"github.com/apache/iceberg-go"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers type=rest
	iceio "github.com/apache/iceberg-go/io"
)

// restConfig is the REST target's configuration for iceberg-go, Spark and
// PyIceberg: the REST catalog server scripts/integration rest starts
// (Apache Iceberg's RESTCatalogServer) at ICERUN_REST_URI, with its
// warehouse on local disk or, with ICERUN_REST_S3_ENDPOINT, in S3. The
// server is one catalog for every test: a test's isolation is its own
// namespace (NewCatalog).
func restConfig(t testing.TB) (props iceberg.Properties, spark, py map[string]string) {
	t.Helper()
	uri := os.Getenv("ICERUN_REST_URI")
	if uri == "" {
		t.Fatalf("target rest needs ICERUN_REST_URI (scripts/integration rest)")
	}
	props = iceberg.Properties{"type": "rest", "uri": uri}
	spark = map[string]string{
		"catalog-impl":  "org.apache.iceberg.rest.RESTCatalog",
		"uri":           uri,
		"cache-enabled": "false", // every query sees the catalog's current metadata
	}
	py = map[string]string{"type": "rest", "uri": uri}
	if wh := os.Getenv("ICERUN_REST_WAREHOUSE"); wh != "" {
		props["warehouse"], spark["warehouse"], py["warehouse"] = wh, wh, wh
	}
	endpoint := os.Getenv("ICERUN_REST_S3_ENDPOINT")
	if endpoint == "" {
		return props, spark, py
	}
	region := os.Getenv("ICERUN_REST_S3_REGION")
	key, secret := os.Getenv("ICERUN_REST_S3_ACCESS_KEY"), os.Getenv("ICERUN_REST_S3_SECRET_KEY")
	props[iceio.S3EndpointURL] = endpoint
	props[iceio.S3Region] = region
	props[iceio.S3AccessKeyID] = key
	props[iceio.S3SecretAccessKey] = secret
	spark["io-impl"] = "org.apache.iceberg.aws.s3.S3FileIO"
	spark["s3.endpoint"] = endpoint
	spark["s3.path-style-access"] = "true"
	spark["s3.access-key-id"] = key
	spark["s3.secret-access-key"] = secret
	spark["client.region"] = region
	py["s3.endpoint"] = endpoint
	py["s3.region"] = region
	py["s3.access-key-id"] = key
	py["s3.secret-access-key"] = secret
	return props, spark, py
}
