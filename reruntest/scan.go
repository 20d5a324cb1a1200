package reruntest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// canonical is a table's content as text: one row a line, columns in
// schema order joined by "|", sorted. The header line names the columns.
type canonical struct {
	header string
	rows   []string
}

// scan reads the current snapshot of ident.
func scan(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) (canonical, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return canonical{}, fmt.Errorf("load %s: %w", name(ident), err)
	}
	var c canonical
	names := make([]string, 0, len(tbl.Schema().Fields()))
	for _, f := range tbl.Schema().Fields() {
		names = append(names, f.Name)
	}
	c.header = strings.Join(names, "|")
	if tbl.CurrentSnapshot() == nil {
		return c, nil
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return c, fmt.Errorf("scan %s: %w", name(ident), err)
	}
	for rec, err := range batches {
		if err != nil {
			return c, fmt.Errorf("scan %s: %w", name(ident), err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			cells := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				cells[j] = col.ValueStr(i)
			}
			c.rows = append(c.rows, strings.Join(cells, "|"))
		}
		rec.Release()
	}
	slices.Sort(c.rows)
	return c, nil
}

func name(ident icetable.Identifier) string { return strings.Join(ident, ".") }

// diff describes the first difference between want and got, or "".
func diff(want, got canonical) string {
	if want.header != got.header {
		return fmt.Sprintf("columns differ: got %q, want %q", got.header, want.header)
	}
	for i := 0; i < max(len(want.rows), len(got.rows)); i++ {
		var w, g string
		if i < len(want.rows) {
			w = want.rows[i]
		}
		if i < len(got.rows) {
			g = got.rows[i]
		}
		if w == g {
			continue
		}
		switch {
		case i >= len(want.rows):
			return fmt.Sprintf("%d rows, want %d; first extra row (sorted row %d): %q", len(got.rows), len(want.rows), i, g)
		case i >= len(got.rows):
			return fmt.Sprintf("%d rows, want %d; first missing row (sorted row %d): %q", len(got.rows), len(want.rows), i, w)
		}
		return fmt.Sprintf("%d rows (want %d); first differing row (sorted row %d):\n\tgot  %q\n\twant %q", len(got.rows), len(want.rows), i, g, w)
	}
	return ""
}

// duplicateKey returns the first key that two rows of c share, or "".
func duplicateKey(c canonical, key []string) (string, error) {
	cols := strings.Split(c.header, "|")
	idx := make([]int, len(key))
	for i, k := range key {
		idx[i] = slices.Index(cols, k)
		if idx[i] < 0 {
			return "", fmt.Errorf("key column %q is not in the table (columns %s)", k, c.header)
		}
	}
	seen := make(map[string]bool, len(c.rows))
	for _, r := range c.rows {
		cells := strings.Split(r, "|")
		parts := make([]string, len(idx))
		for i, j := range idx {
			parts[i] = key[i] + "=" + cells[j]
		}
		k := strings.Join(parts, ", ")
		if seen[k] {
			return k, nil
		}
		seen[k] = true
	}
	return "", nil
}
