package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	icetable "github.com/apache/iceberg-go/table"
)

// listCmd lists the namespaces of the catalog, or the tables of one.
func listCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return noArgs(rest[1:])
	}
	ctx, cat, err := e.catalog(ctx)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		nss, err := cat.ListNamespaces(ctx, nil)
		if err != nil {
			return fmt.Errorf("list the namespaces of %s: %w", e.where(), err)
		}
		names := make([]string, len(nss))
		for i, ns := range nss {
			names[i] = strings.Join(ns, ".")
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintln(e.out, n)
		}
		if len(names) == 0 {
			e.note("no namespace in %s", e.where())
		}
		return nil
	}
	ns := icetable.Identifier(strings.Split(rest[0], "."))
	var names []string
	for id, err := range cat.ListTables(ctx, ns) {
		if err != nil {
			e.tableName = rest[0]
			return e.notFound(fmt.Errorf("list the tables of %s in %s: %w", rest[0], e.where(), err))
		}
		names = append(names, strings.Join(id, "."))
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintln(e.out, n)
	}
	if len(names) == 0 {
		e.note("no table in namespace %s of %s", rest[0], e.where())
	}
	return nil
}
