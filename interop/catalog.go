//go:build interop

package interop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3://
	icetable "github.com/apache/iceberg-go/table"
	_ "github.com/uptrace/bun/driver/pgdriver" // registers sql.driver=pg

	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/internal/enginestest"
)

// Catalog is one test's catalog, open in Go (iceberg-go's SQL or REST
// catalog, as icerun uses it), in Spark and in PyIceberg under the same Name.
type Catalog struct {
	Target string // sqlite, pg, s3, pg+s3 or rest
	Name   string // the catalog's name everywhere (iceberg_tables.catalog_name)
	NS     string // a namespace created for the test
	Cat    catalog.Catalog
	Props  iceberg.Properties // iceberg-go's properties, enough to open it again
}

// catalogs counts the catalogs opened, for fresh names.
var catalogs atomic.Int64

// Targets are the catalog targets configured in this environment: sqlite
// always, rest with ICERUN_REST_URI, pg with ICERUN_PG_URI, s3 with
// ICERUN_S3_ENDPOINT (all from scripts/integration), pg+s3 with both. The
// last one is where the matrix tests run (lastTarget). ICERUN_INTEROP_TARGETS (space
// separated) replaces the list: CI runs sqlite on its own,
// then the others inside scripts/integration.
func Targets() []string {
	out := []string{"sqlite"}
	if os.Getenv("ICERUN_REST_URI") != "" {
		out = append(out, "rest")
	}
	pg, s3 := os.Getenv("ICERUN_PG_URI") != "", os.Getenv("ICERUN_S3_ENDPOINT") != ""
	if pg {
		out = append(out, "pg")
	}
	if s3 {
		out = append(out, "s3")
	}
	if pg && s3 {
		out = append(out, "pg+s3")
	}
	if only := strings.Fields(os.Getenv("ICERUN_INTEROP_TARGETS")); len(only) > 0 {
		return only // a named target that is not configured fails in NewCatalog
	}
	return out
}

// EachTarget runs fn as a subtest per configured target, each on a fresh
// catalog.
func (e *Engines) EachTarget(t *testing.T, fn func(t *testing.T, c *Catalog)) {
	for _, tg := range Targets() {
		t.Run(tg, func(t *testing.T) { fn(t, e.NewCatalog(t, tg)) })
	}
}

// NewCatalog opens a fresh catalog on target for this test: a new SQLite
// file (or a new catalog name on the shared PostgreSQL database), a new
// warehouse folder (on disk or in the S3 bucket), and a namespace; on the
// REST server, a namespace of its own. It registers the catalog in Spark
// and PyIceberg.
func (e *Engines) NewCatalog(t testing.TB, target string) *Catalog {
	t.Helper()
	switch target {
	case "sqlite", "pg", "s3", "pg+s3", "rest":
	default:
		t.Fatalf("interop: unknown target %q (sqlite, pg, s3, pg+s3, rest)", target)
	}
	name := fmt.Sprintf("c%d_%s", catalogs.Add(1), randomID())
	dir := t.TempDir()

	var (
		props     iceberg.Properties
		spark, py map[string]string
	)
	ns := "ns"
	if target == "rest" {
		props, spark, py = restConfig(t)
		ns = "ns_" + name // one server for every test: a namespace each
	} else {
		props, spark, py = sqlConfig(t, target, name, dir)
	}

	ctx := context.Background()
	cat, err := catalog.Load(ctx, name, props)
	if err != nil {
		t.Fatalf("open %s catalog %s: %v", target, name, err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	c := &Catalog{Target: target, Name: name, NS: ns, Cat: cat, Props: props}
	if err := cat.CreateNamespace(ctx, icetable.Identifier{c.NS}, nil); err != nil {
		t.Fatalf("create namespace %s on %s: %v", c.NS, target, err)
	}
	e.Configure(t, name, spark, py)
	return c
}

// sqlConfig is the configuration of a SQL catalog target (sqlite, pg, s3,
// pg+s3) for iceberg-go, Spark and PyIceberg: a new SQLite file in dir (or
// catalog name on the shared PostgreSQL database) and a new warehouse
// folder (in dir or in the S3 bucket).
func sqlConfig(t testing.TB, target, name, dir string) (props iceberg.Properties, spark, py map[string]string) {
	t.Helper()
	warehouse := "file://" + dir
	if strings.Contains(target, "s3") {
		warehouse = "s3://" + os.Getenv("ICERUN_S3_BUCKET") + "/interop-" + name
	}
	if strings.HasPrefix(target, "pg") {
		uri := os.Getenv("ICERUN_PG_URI")
		if uri == "" {
			t.Fatalf("target %s needs ICERUN_PG_URI (scripts/integration pg)", target)
		}
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatalf("ICERUN_PG_URI: %v", err)
		}
		pass, _ := u.User.Password()
		props = iceberg.Properties{
			"type":                "sql",
			"uri":                 uri,
			sqlcat.DialectKey:     string(sqlcat.Postgres),
			sqlcat.DriverKey:      "pg",
			"init_catalog_tables": "true",
		}
		spark = enginestest.SparkJDBC("jdbc:postgresql://"+u.Host+u.Path, warehouse)
		spark["jdbc.user"] = u.User.Username()
		spark["jdbc.password"] = pass
		py = map[string]string{"uri": "postgresql+psycopg2://" + u.User.String() + "@" + u.Host + u.Path}
	} else {
		props = internal.SQLiteProps(dir)
		spark, py = enginestest.LocalCatalog(dir)
	}
	props["warehouse"] = warehouse
	spark["warehouse"] = warehouse
	py["warehouse"] = warehouse
	if strings.Contains(target, "s3") {
		if os.Getenv("ICERUN_S3_ENDPOINT") == "" {
			t.Fatalf("target %s needs ICERUN_S3_ENDPOINT (scripts/integration s3)", target)
		}
		endpoint, region := os.Getenv("ICERUN_S3_ENDPOINT"), os.Getenv("ICERUN_S3_REGION")
		key, secret := os.Getenv("ICERUN_S3_ACCESS_KEY"), os.Getenv("ICERUN_S3_SECRET_KEY")
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
	}

	return props, spark, py
}

// Ident is the iceberg-go identifier of table name in the test's namespace.
func (c *Catalog) Ident(name string) icetable.Identifier { return icetable.Identifier{c.NS, name} }

// Spark is the Spark SQL name of table name: catalog.ns.name, quoted.
func (c *Catalog) Spark(name string) string {
	return fmt.Sprintf("`%s`.`%s`.`%s`", c.Name, c.NS, name)
}

// Py is PyIceberg's name of table name: ns.name.
func (c *Catalog) Py(name string) string { return c.NS + "." + name }

// CreateTable creates table name with the schema, spec and properties
// (format-version among them).
func (c *Catalog) CreateTable(t testing.TB, name string, sch *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties) icetable.Identifier {
	t.Helper()
	ident := c.Ident(name)
	opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}
	if props != nil {
		opts = append(opts, catalog.WithProperties(props))
	}
	if _, err := c.Cat.CreateTable(context.Background(), ident, sch, opts...); err != nil {
		t.Fatalf("create %v on %s: %v", ident, c.Target, err)
	}
	return ident
}

// Load loads table name in Go.
func (c *Catalog) Load(t testing.TB, name string) *icetable.Table {
	t.Helper()
	tbl, err := c.Cat.LoadTable(context.Background(), c.Ident(name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return tbl
}

// Snapshots returns the ids of the table's snapshots in the order they
// were added (metadata order).
func (c *Catalog) Snapshots(t testing.TB, name string) []int64 {
	t.Helper()
	var ids []int64
	for _, s := range c.Load(t, name).Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// lastTarget is the last configured target: the matrix tests run on one
// target per run, the most remote one (pg+s3 inside scripts/integration).
func lastTarget() string {
	tg := Targets()
	return tg[len(tg)-1]
}
