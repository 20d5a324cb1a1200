//go:build integration

package integration

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
)

// tableIDs reads the id of every row of the table, sorted, through a
// catalog of its own (the sinks write through theirs).
func tableIDs(t *testing.T, ident icetable.Identifier, wh string) []string {
	t.Helper()
	return columnOf(t, ident, wh, "id")
}

// columnOf reads a string or binary column of every row of the table (none
// when it does not exist), sorted.
func columnOf(t *testing.T, ident icetable.Identifier, wh, column string) []string {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cat.(interface{ Close() error }); ok {
		defer c.Close()
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields(column)).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		switch col := rec.Column(0).(type) {
		case *array.String:
			for i := 0; i < col.Len(); i++ {
				out = append(out, col.Value(i))
			}
		case *array.Binary:
			for i := 0; i < col.Len(); i++ {
				out = append(out, string(col.Value(i)))
			}
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}
