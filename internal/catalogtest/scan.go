package catalogtest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// CanonicalScan reads every row of the table's current snapshot and
// returns them as text, one row a line (columns in schema order, "|"
// separated), sorted: two tables with the same content give the same bytes.
func CanonicalScan(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []byte {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	return CanonicalTable(t, tbl)
}

// CanonicalTable is [CanonicalScan] of a loaded table state (a branch's
// view, say).
func CanonicalTable(t testing.TB, tbl *icetable.Table) []byte {
	t.Helper()
	ident := tbl.Identifier()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, batches, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatalf("scan %v: %v", ident, err)
	}
	var rows []string
	for rec, err := range batches {
		if err != nil {
			t.Fatalf("scan %v: %v", ident, err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			cells := make([]string, rec.NumCols())
			for c, col := range rec.Columns() {
				cells[c] = col.ValueStr(i)
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
		rec.Release()
	}
	slices.Sort(rows)
	var b bytes.Buffer
	for _, r := range rows {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// DataFiles lists the Parquet files under dir (a warehouse folder), as
// sorted absolute paths: what is on disk, referenced or not.
func DataFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	slices.Sort(out)
	return out
}

// Snapshots is the number of snapshots of the table.
func Snapshots(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	return len(tbl.Metadata().Snapshots())
}

// UnreferencedMetadata lists the *.metadata.json files of the table on
// disk that neither its current metadata nor its metadata log names.
func UnreferencedMetadata(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	live := map[string]bool{filepath.Base(tbl.MetadataLocation()): true}
	for e := range tbl.Metadata().PreviousFiles() {
		live[filepath.Base(e.MetadataFile)] = true
	}
	dir := filepath.Dir(strings.TrimPrefix(tbl.MetadataLocation(), "file://"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".metadata.json") && !live[e.Name()] {
			out = append(out, e.Name())
		}
	}
	return out
}
