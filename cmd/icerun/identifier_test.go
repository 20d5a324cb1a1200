package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal"
)

// icerun create -identifier-fields declares the table's row key, and
// icerun sink -format debezium upserts on it when -upsert is not given.
func TestIdentifierFieldsAreTheDebeziumKey(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	parquetFile(t, filepath.Join(dir, "day1.parquet"), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 5)
	code, out, errs := icerun("create", "shop.keyed", "-warehouse", wh, "-schema-from", filepath.Join(dir, "day1.parquet"), "-identifier-fields", "order_id")
	require.Equal(t, 0, code, "%s%s", out, errs)

	cat, err := internal.OpenSQLite(context.Background(), wh)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(context.Background(), icetable.Identifier{"shop", "keyed"})
	require.NoError(t, err)
	require.Equal(t, "order_id", identifierKey(tbl.Schema()), "the identifier fields the catalog keeps")
	f, ok := tbl.Schema().FindFieldByName("order_id")
	require.True(t, ok)
	require.True(t, f.Required, "an identifier field is made required")

	// Upsert mode, on order_id: it orders by _cdc_lsn, which this table
	// lacks, and the sink says so before any broker is tried.
	sinkArgs := func(table, wh string) []string {
		return []string{"sink", table, "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-connect-timeout", "1ms", "-format", "debezium", "-log-format", "json"}
	}
	code, out, errs = icerun(sinkArgs("shop.keyed", wh)...)
	require.Equal(t, exitRequest, code, "%s%s", out, errs)
	require.Contains(t, unquoted(errs), `"_cdc_lsn" is not a top-level column`)
	require.Contains(t, errs, `"key":"order_id"`)

	// A table without identifier fields: every change is appended; the
	// sink gets as far as the brokers.
	code, out, errs = icerun(sinkArgs("db.fact_orders", warehouse(t))...)
	require.Equal(t, exitRetry, code, "%s%s", out, errs)
	require.Contains(t, errs, "every change is appended as a row")
}

func TestIdentifierFieldsRefused(t *testing.T) {
	dir := t.TempDir()
	parquetFile(t, filepath.Join(dir, "day1.parquet"), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 5)
	schema := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"note","type":"string","required":false},{"id":3,"name":"s","type":{"type":"struct","fields":[{"id":4,"name":"x","type":"long","required":true}]},"required":true}]}`
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-schema", schema, "-identifier-fields", "nope"}, `"nope" is not a top-level column`},
		{[]string{"-schema", schema, "-identifier-fields", "id,note"}, `"note" is optional`},
		{[]string{"-schema", schema, "-identifier-fields", "s"}, "primitive type"},
		{[]string{"-schema-from", filepath.Join(dir, "day1.parquet"), "-identifier-fields", "nope"}, "no column nope"},
	} {
		wh := filepath.Join(t.TempDir(), "wh")
		code, out, errs := icerun(append([]string{"create", "shop.t", "-warehouse", wh}, tc.flags...)...)
		if code != exitUsage || !strings.Contains(unquoted(errs), tc.want) {
			t.Errorf("icerun create %q = %d, %q%q; want exit %d with %q", tc.flags, code, out, errs, exitUsage, tc.want)
		}
	}
	// A schema JSON's required primitive column is accepted.
	wh := filepath.Join(t.TempDir(), "wh")
	code, out, errs := icerun("create", "shop.t", "-warehouse", wh, "-schema", schema, "-identifier-fields", "id")
	require.Equal(t, 0, code, "%s%s", out, errs)
}
