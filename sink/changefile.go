package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// ChangeFile is a Parquet file of change rows that a member of a fleet in
// upsert mode ([WithUpsert], [WithHandOver]) hands over in place of data
// files: its pending rows, resolved to the table's schema, in the order
// it received them. The committer applies the change files of the
// hand-overs it lands as one changelog write, then removes them. A
// change file is never a file of the table.
type ChangeFile struct {
	Path string
	Rows int64
	Size int64
}

// errChangeFile marks a change file the committer cannot read (removed,
// or of another Arrow schema than the others): the hand-over naming it is
// dropped, and its member, fenced, replays its rows.
var errChangeFile = errors.New("sink: change file unreadable")

// writeChangeFile writes recs to one new Parquet file in tbl's data
// location, named after member and a fresh UUID, with their Arrow schema
// (field ids included) stored in it.
func writeChangeFile(ctx context.Context, tbl *icetable.Table, member string, recs []arrow.RecordBatch) (_ ChangeFile, err error) {
	if len(recs) == 0 {
		return ChangeFile{}, fmt.Errorf("no change rows")
	}
	sc := recs[0].Schema()
	var rows int64
	for _, r := range recs {
		if !r.Schema().Equal(sc) {
			return ChangeFile{}, fmt.Errorf("%w: the pending rows have two schemas", ErrBadInput)
		}
		rows += r.NumRows()
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return ChangeFile{}, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return ChangeFile{}, fmt.Errorf("the table's file IO cannot write")
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return ChangeFile{}, err
	}
	loc := locs.NewDataLocation(fmt.Sprintf("changes-%s-%s.parquet", safeName(member), uuid.NewString()))
	out, err := wfs.Create(loc)
	if err != nil {
		return ChangeFile{}, err
	}
	cnt := &countingWriter{w: out}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = wfs.Remove(loc)
		}
	}()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true))
	pw, err := pqarrow.NewFileWriter(sc, cnt, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return ChangeFile{}, err
	}
	for _, r := range recs {
		if err := pw.WriteBuffered(r); err != nil {
			_ = pw.Close()
			return ChangeFile{}, err
		}
	}
	if err := pw.Close(); err != nil {
		return ChangeFile{}, err
	}
	return ChangeFile{Path: loc, Rows: rows, Size: cnt.n}, nil
}

// readChangeFile reads the rows of f, in the order they were written.
// A file that is gone or that does not hold f.Rows rows fails with
// errChangeFile.
func readChangeFile(ctx context.Context, fsys iceio.IO, f ChangeFile) (arrow.Table, error) {
	in, err := fsys.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %w", errChangeFile, f.Path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("change file %s: %w", f.Path, err)
	}
	defer in.Close()
	pr, err := file.NewParquetReader(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errChangeFile, f.Path, err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errChangeFile, f.Path, err)
	}
	t, err := fr.ReadTable(ctx)
	if err != nil {
		return nil, fmt.Errorf("change file %s: %w", f.Path, err)
	}
	if t.NumRows() != f.Rows {
		t.Release()
		return nil, fmt.Errorf("%w: %s holds %d rows, its hand-over says %d", errChangeFile, f.Path, t.NumRows(), f.Rows)
	}
	return t, nil
}

// changeRows are the rows of change files, as record batches in file order.
type changeRows struct {
	schema *arrow.Schema
	recs   []arrow.RecordBatch
}

// add appends the rows of t (released here) to c; rows of another Arrow
// schema than the first file's fail with errChangeFile.
func (c *changeRows) add(t arrow.Table, path string) error {
	defer t.Release()
	if c.schema == nil {
		c.schema = t.Schema()
	} else if !t.Schema().Equal(c.schema) {
		return fmt.Errorf("%w: %s holds rows of another schema than the other change files", errChangeFile, path)
	}
	tr := array.NewTableReader(t, 64<<10)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		rec.Retain()
		c.recs = append(c.recs, rec)
	}
	return tr.Err()
}

// reader reads every row of c once (c keeps its rows).
func (c *changeRows) reader() (array.RecordReader, error) {
	for _, r := range c.recs {
		r.Retain()
	}
	return array.NewRecordReader(c.schema, c.recs)
}

func (c *changeRows) release() {
	for _, r := range c.recs {
		r.Release()
	}
	c.recs = nil
}

// removeChangeFiles removes files; a file already gone is no error.
func removeChangeFiles(ctx context.Context, tbl *icetable.Table, files []ChangeFile) error {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	return removePaths(ctx, tbl, paths)
}

// safeName is s with every byte that is not a letter, digit, '-' or '_'
// replaced by '_': a member id as part of a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
