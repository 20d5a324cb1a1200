package main

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
)

// dropCmd drops a table, and with -purge deletes its files.
func dropCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	purge := fs.Bool("purge", false, "also delete the table's files (data, manifests, metadata)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	ctx, cat, tbl, err := e.loadTable(ctx)
	if err != nil {
		return err
	}
	if !*purge {
		if err := cat.DropTable(ctx, tbl.Identifier()); err != nil {
			return fmt.Errorf("drop %s: %w", e.tableName, err)
		}
		fmt.Fprintf(e.out, "dropped %s from the catalog; its files stay at %s (drop -purge deletes them)\n", e.tableName, tbl.Location())
		return nil
	}
	p, ok := cat.(catalog.PurgeableTable)
	if !ok {
		return fmt.Errorf("drop %s: the %s catalog cannot purge; drop without -purge and delete %s yourself", e.tableName, cat.CatalogType(), tbl.Location())
	}
	if err := p.PurgeTable(ctx, tbl.Identifier()); err != nil {
		return fmt.Errorf("purge %s: %w", e.tableName, err)
	}
	fmt.Fprintf(e.out, "dropped %s and deleted its files under %s\n", e.tableName, tbl.Location())
	return nil
}
