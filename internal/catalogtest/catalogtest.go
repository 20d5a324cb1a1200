// Package catalogtest provides test fixtures: an embedded SQLite catalog over
// a temporary warehouse folder, and helpers to create tables in it.
package catalogtest

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal"
)

// Namespace is the namespace every fixture table lives in.
const Namespace = "db"

// New opens an embedded SQLite catalog in a fresh temporary folder, with
// the namespace [Namespace] created. It returns the catalog and the folder.
func New(t testing.TB) (catalog.Catalog, string) {
	t.Helper()
	dir := t.TempDir()
	cat := Open(t, dir)
	if err := cat.CreateNamespace(context.Background(), icetable.Identifier{Namespace}, nil); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return cat, dir
}

// Open opens the embedded catalog in dir, which may already hold one.
func Open(t testing.TB, dir string) catalog.Catalog {
	t.Helper()
	cat, err := internal.OpenSQLite(context.Background(), dir)
	if err != nil {
		t.Fatalf("open catalog: %v", err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return cat
}

// CreateTable creates db.name with the schema and spec.
func CreateTable(t testing.TB, cat catalog.Catalog, name string, sch *iceberg.Schema, spec iceberg.PartitionSpec, props iceberg.Properties) icetable.Identifier {
	t.Helper()
	ident := icetable.Identifier{Namespace, name}
	opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}
	if props != nil {
		opts = append(opts, catalog.WithProperties(props))
	}
	if _, err := cat.CreateTable(context.Background(), ident, sch, opts...); err != nil {
		t.Fatalf("create table %v: %v", ident, err)
	}
	return ident
}
