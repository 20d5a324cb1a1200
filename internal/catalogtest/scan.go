package catalogtest

import (
	"bytes"
	"context"
	"io/fs"
	"net/url"
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

// Referenced lists every file any snapshot of the table references:
// manifest lists, manifests and data files, as the table names them.
func Referenced(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatalf("file IO of %v: %v", ident, err)
	}
	var out []string
	for _, s := range tbl.Metadata().Snapshots() {
		out = append(out, s.ManifestList)
		mfs, err := s.Manifests(fsys)
		if err != nil {
			t.Fatalf("manifests of snapshot %d: %v", s.SnapshotID, err)
		}
		for _, mf := range mfs {
			out = append(out, mf.FilePath())
			entries, err := mf.FetchEntries(fsys, false)
			if err != nil {
				t.Fatalf("entries of %s: %v", mf.FilePath(), err)
			}
			for _, e := range entries {
				out = append(out, e.DataFile().FilePath())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// UnreferencedDataFiles lists the Parquet files under dir (the table's
// warehouse folder) that no snapshot of the table references: orphans.
func UnreferencedDataFiles(t testing.TB, cat catalog.Catalog, ident icetable.Identifier, dir string) []string {
	t.Helper()
	live := map[string]bool{}
	for _, p := range Referenced(t, cat, ident) {
		live[strings.TrimPrefix(p, "file://")] = true
		if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
			live[u.Path] = true // iceberg-go's writers escape a folder name (p=00%3A30%3A00) its file IO unescapes
		}
	}
	var out []string
	for _, p := range DataFiles(t, dir) {
		if !live[p] {
			out = append(out, p)
		}
	}
	return out
}
