//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers type=rest
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3://
	icetable "github.com/apache/iceberg-go/table"
	_ "github.com/uptrace/bun/driver/pgdriver" // registers sql.driver=pg
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/icerun/icerun/examples/orderdata"
)

// pgDriver is the database/sql driver name bun's pgdriver registers.
const pgDriver = "pg"

// target is one production shape: a catalog and a warehouse.
type target struct {
	name string
	// env returns the catalog properties of a fresh, isolated environment
	// for one test, or "" as reason when the target is not configured.
	env func(t testing.TB) (iceberg.Properties, string)
}

// env is one test's catalog: properties (enough to open it again in
// another process) and the namespace its tables live in.
type env struct {
	Target string
	Props  iceberg.Properties
	NS     string
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// required reports whether a missing target (a catalog, a store, a Kafka
// broker) fails instead of skipping: when ICERUN_TARGETS names it, and
// always under CI=true, where .ci/run starts every service a test it runs
// needs.
func required(name string) bool {
	if slices.Contains(strings.Fields(os.Getenv("ICERUN_TARGETS")), name) {
		return true
	}
	return os.Getenv("CI") == "true"
}

func sqliteProps(dir string) iceberg.Properties {
	return iceberg.Properties{
		"type":                "sql",
		"uri":                 "file:" + filepath.Join(dir, "catalog.db") + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_txlock=immediate",
		sqlcat.DialectKey:     string(sqlcat.SQLite),
		sqlcat.DriverKey:      sqliteshim.ShimName,
		"warehouse":           "file://" + dir,
		"init_catalog_tables": "true",
	}
}

// pgProps is the SQL catalog on PostgreSQL: the configuration the README
// documents.
func pgProps(uri, warehouse string) iceberg.Properties {
	return iceberg.Properties{
		"type":                "sql",
		"uri":                 uri,
		sqlcat.DialectKey:     string(sqlcat.Postgres),
		sqlcat.DriverKey:      pgDriver,
		"warehouse":           warehouse,
		"init_catalog_tables": "true",
	}
}

// s3Props are iceberg-go's S3 FileIO properties for the versitygw target.
func s3Props() (iceberg.Properties, bool) {
	if os.Getenv("ICERUN_S3_ENDPOINT") == "" {
		return nil, false
	}
	return iceberg.Properties{
		iceio.S3EndpointURL:     os.Getenv("ICERUN_S3_ENDPOINT"),
		iceio.S3Region:          os.Getenv("ICERUN_S3_REGION"),
		iceio.S3AccessKeyID:     os.Getenv("ICERUN_S3_ACCESS_KEY"),
		iceio.S3SecretAccessKey: os.Getenv("ICERUN_S3_SECRET_KEY"),
	}, true
}

func s3Warehouse() string {
	return "s3://" + os.Getenv("ICERUN_S3_BUCKET") + "/it-" + randomID()
}

func merge(ps ...iceberg.Properties) iceberg.Properties {
	out := iceberg.Properties{}
	for _, p := range ps {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}

var targets = []target{
	{"sqlite", func(t testing.TB) (iceberg.Properties, string) {
		return sqliteProps(t.TempDir()), ""
	}},
	{"pg", func(t testing.TB) (iceberg.Properties, string) {
		uri := os.Getenv("ICERUN_PG_URI")
		if uri == "" {
			return nil, "ICERUN_PG_URI is not set"
		}
		return pgProps(uri, "file://"+t.TempDir()), ""
	}},
	{"s3", func(t testing.TB) (iceberg.Properties, string) {
		s3, ok := s3Props()
		if !ok {
			return nil, "ICERUN_S3_ENDPOINT is not set"
		}
		p := sqliteProps(t.TempDir())
		p["warehouse"] = s3Warehouse()
		return merge(p, s3), ""
	}},
	{"pg+s3", func(t testing.TB) (iceberg.Properties, string) {
		uri := os.Getenv("ICERUN_PG_URI")
		s3, ok := s3Props()
		if uri == "" || !ok {
			return nil, "ICERUN_PG_URI or ICERUN_S3_ENDPOINT is not set"
		}
		return merge(pgProps(uri, s3Warehouse()), s3), ""
	}},
	{"rest", func(t testing.TB) (iceberg.Properties, string) {
		uri := os.Getenv("ICERUN_REST_URI")
		if uri == "" {
			return nil, "ICERUN_REST_URI is not set"
		}
		return restProps(uri), ""
	}},
}

// restProps is iceberg-go's REST catalog at uri, as scripts/integration
// exports it: Apache Iceberg's RESTCatalogServer, with its warehouse on
// local disk or (ICERUN_REST_S3_*) in S3. Unset variables set nothing.
func restProps(uri string) iceberg.Properties {
	p := iceberg.Properties{"type": "rest", "uri": uri}
	for k, v := range map[string]string{
		"warehouse":             "ICERUN_REST_WAREHOUSE",
		"credential":            "ICERUN_REST_CREDENTIAL", // OAuth2 client credentials "id:secret"
		iceio.S3EndpointURL:     "ICERUN_REST_S3_ENDPOINT",
		iceio.S3Region:          "ICERUN_REST_S3_REGION",
		iceio.S3AccessKeyID:     "ICERUN_REST_S3_ACCESS_KEY",
		iceio.S3SecretAccessKey: "ICERUN_REST_S3_SECRET_KEY",
	} {
		if val := os.Getenv(v); val != "" {
			p[k] = val
		}
	}
	return p
}

// eachTarget runs fn as a subtest per target, on a fresh environment.
func eachTarget(t *testing.T, fn func(t *testing.T, e env)) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			props, missing := tg.env(t)
			if missing != "" {
				if required(tg.name) {
					t.Fatalf("target %s is required here (CI=%q, ICERUN_TARGETS=%q) but %s", tg.name, os.Getenv("CI"), os.Getenv("ICERUN_TARGETS"), missing)
				}
				t.Skip(missing)
			}
			e := env{Target: tg.name, Props: props, NS: "it_" + randomID()}
			cat := e.catalog(t)
			if err := cat.CreateNamespace(context.Background(), icetable.Identifier{e.NS}, nil); err != nil {
				t.Fatalf("create namespace %s on %s: %v", e.NS, tg.name, err)
			}
			fn(t, e)
		})
	}
}

// open opens the environment's catalog in this process.
func (e env) open(ctx context.Context) (catalog.Catalog, error) {
	return catalog.Load(ctx, "icerun", e.Props)
}

func (e env) catalog(t testing.TB) catalog.Catalog {
	t.Helper()
	cat, err := e.open(context.Background())
	if err != nil {
		t.Fatalf("open %s catalog: %v", e.Target, err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

// ordersTable creates NS.name with the fact_orders schema and spec.
func (e env) ordersTable(t testing.TB, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	ident := icetable.Identifier{e.NS, name}
	spec := orderdata.Spec
	if _, err := cat.CreateTable(context.Background(), ident, orderdata.Schema, catalog.WithPartitionSpec(&spec)); err != nil {
		t.Fatalf("create %v on %s: %v", ident, e.Target, err)
	}
	return ident
}

// files lists every file under the table's location, through the table's
// own file IO (local or S3), sorted.
func files(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatalf("fs of %v: %v", ident, err)
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		t.Fatalf("file IO %T of %v cannot list", fsys, ident)
	}
	var out []string
	err = lister.WalkDir(tbl.Location(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("list %s: %v", tbl.Location(), err)
	}
	slices.Sort(out)
	return out
}

// dataFiles is files restricted to Parquet data files.
func dataFiles(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	var out []string
	for _, f := range files(t, cat, ident) {
		if strings.HasSuffix(f, ".parquet") {
			out = append(out, f)
		}
	}
	return out
}
