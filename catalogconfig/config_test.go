package catalogconfig

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	file := `
catalog:
  Prod:
    type: sql
    uri: postgres://etl@db:5432/ice
    s3:
      region: eu-west-1
    s3.endpoint: http://minio:9000
    max-conns: 4
  dev:
    type: local
    warehouse: ./wh
`
	tests := []struct {
		name    string
		environ []string
		want    map[string]iceberg.Properties
	}{
		{"file only", nil, map[string]iceberg.Properties{
			"prod": {"type": "sql", "uri": "postgres://etl@db:5432/ice", "s3.region": "eu-west-1", "s3.endpoint": "http://minio:9000", "max-conns": "4"},
			"dev":  {"type": "local", "warehouse": "./wh"},
		}},
		{"env overrides and adds, PyIceberg's rule", []string{
			"ICERUN_CATALOG__PROD__S3__ACCESS_KEY_ID=AKIA",
			"icerun_catalog__prod__uri=postgres://other/ice",
			"ICERUN_CATALOG__MY_CAT__SQL__DIALECT=postgres",
			"ICERUN_CATALOG__MY_CAT__TYPE=sql",
			"PYICEBERG_CATALOG__PROD__URI=ignored",
			"HOME=/root",
		}, map[string]iceberg.Properties{
			"prod":   {"type": "sql", "uri": "postgres://other/ice", "s3.region": "eu-west-1", "s3.endpoint": "http://minio:9000", "max-conns": "4", "s3.access-key-id": "AKIA"},
			"dev":    {"type": "local", "warehouse": "./wh"},
			"my-cat": {"sql.dialect": "postgres", "type": "sql"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(file), tc.environ)
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Catalogs)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		environ []string
	}{
		{"not yaml", "catalog: [", nil},
		{"list value", "catalog:\n  a:\n    uri: [1, 2]\n", nil},
		{"variable without key", "", []string{"ICERUN_CATALOG__PROD=x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), tc.environ)
			require.ErrorIs(t, err, ErrBadConfig)
		})
	}
}

func TestProperties(t *testing.T) {
	tests := []struct {
		name string
		in   iceberg.Properties
		want iceberg.Properties
	}{
		{"postgres uri picks pg driver and dialect",
			iceberg.Properties{"type": "sql", "uri": "postgres://u@h/db"},
			iceberg.Properties{"type": "sql", "uri": "postgres://u@h/db", "sql.driver": "pg", "sql.dialect": "postgres", "init_catalog_tables": "true"}},
		{"postgresql uri without type is sql",
			iceberg.Properties{"uri": "postgresql://u@h/db"},
			iceberg.Properties{"type": "sql", "uri": "postgresql://u@h/db", "sql.driver": "pg", "sql.dialect": "postgres", "init_catalog_tables": "true"}},
		{"sqlite file",
			iceberg.Properties{"type": "sql", "uri": "file:/tmp/c.db", "init_catalog_tables": "false"},
			iceberg.Properties{"type": "sql", "uri": "file:/tmp/c.db", "sql.driver": "sqliteshim", "sql.dialect": "sqlite", "init_catalog_tables": "false"}},
		{"explicit driver kept",
			iceberg.Properties{"type": "sql", "uri": "postgres://u@h/db", "sql.driver": "pgx", "sql.dialect": "postgres"},
			iceberg.Properties{"type": "sql", "uri": "postgres://u@h/db", "sql.driver": "pgx", "sql.dialect": "postgres", "init_catalog_tables": "true"}},
		{"rest untouched",
			iceberg.Properties{"type": "rest", "uri": "https://cat"},
			iceberg.Properties{"type": "rest", "uri": "https://cat"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Config{Catalogs: map[string]iceberg.Properties{"c": tc.in}}.Properties("C")
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := Config{Catalogs: map[string]iceberg.Properties{"a": {}}}.Properties("b")
	require.ErrorIs(t, err, ErrNoCatalog)
	require.Contains(t, err.Error(), `"b" (configured: a;`)
}

// The config file and the variables open the catalog; a postgres uri
// without sql.driver gets past sql.Open (the reported "must provide
// driver" error), and its failure holds no secret.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "icerun.yaml")
	require.NoError(t, os.WriteFile(cfgFile, []byte("catalog:\n  dev:\n    type: local\n    warehouse: "+filepath.Join(dir, "wh")+"\n"), 0o600))
	t.Setenv(EnvConfig, cfgFile)
	t.Setenv("ICERUN_CATALOG__BROKEN__URI", "postgres://etl:pw-Zq81xv@127.0.0.1:1/ice?connect_timeout=2")
	t.Setenv("ICERUN_CATALOG__BROKEN__WAREHOUSE", "file://"+dir)
	t.Setenv("ICERUN_CATALOG__BROKEN__S3__SECRET_ACCESS_KEY", "sk-Hh71kk")
	t.Setenv("ICERUN_CATALOG__BROKEN__CREDENTIAL", "client:cs-9QQ1")

	cat, err := Open(ctx, "dev")
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(ctx, icetable.Identifier{"db"}, nil))
	again, err := OpenLocal(ctx, filepath.Join(dir, "wh"))
	require.NoError(t, err)
	ok, err := again.CheckNamespaceExists(ctx, icetable.Identifier{"db"})
	require.NoError(t, err)
	require.True(t, ok, "the config's local catalog is the embedded one")

	_, err = Open(ctx, "broken")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "must provide driver")
	require.Contains(t, err.Error(), `catalog "broken" (type sql)`)
	for _, secret := range []string{"pw-Zq81xv", "sk-Hh71kk", "cs-9QQ1"} {
		require.NotContains(t, err.Error(), secret)
	}

	_, err = Open(ctx, "missing")
	require.ErrorIs(t, err, ErrNoCatalog)
	require.Contains(t, err.Error(), cfgFile)

	t.Setenv(EnvConfig, filepath.Join(dir, "none.yaml"))
	_, err = Open(ctx, "dev")
	require.ErrorIs(t, err, ErrBadConfig, "an explicit config file must exist")
}

func TestRedact(t *testing.T) {
	props := iceberg.Properties{
		"uri":                  "postgres://etl:p%40ss-word@h/db",
		"credential":           "id:cred-secret",
		"token":                "tok-123456",
		"s3.secret-access-key": "sak-abcdef",
		"warehouse":            "s3://bucket",
	}
	msg := "dial postgres://etl:p%40ss-word@h/db with p@ss-word, id:cred-secret, cred-secret, tok-123456, sak-abcdef in s3://bucket"
	got := Redact(props, msg)
	for _, s := range []string{"p@ss-word", "p%40ss-word", "cred-secret", "tok-123456", "sak-abcdef"} {
		require.NotContains(t, got, s)
	}
	require.Contains(t, got, "s3://bucket")
	d := Describe(props)
	require.NotContains(t, d, "tok-123456")
	require.NotContains(t, d, "p%40ss-word")
	require.Contains(t, d, "token=***")
}
