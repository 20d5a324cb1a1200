package parquetfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icerun/icerun/internal/arrowmem"
)

// Errors of this package.
var (
	// ErrNoFiles: the paths hold no .parquet file.
	ErrNoFiles = errors.New("parquetfile: no Parquet file")
	// ErrSchemaMismatch: two files have different Arrow schemas.
	ErrSchemaMismatch = errors.New("parquetfile: schemas differ")
	// ErrBadOption: an invalid option value.
	ErrBadOption = errors.New("parquetfile: bad option")
	// ErrCorrupt: a file whose footer or pages arrow-go's reader cannot
	// make sense of (it panicked on them): a truncated or damaged file.
	ErrCorrupt = errors.New("parquetfile: corrupt Parquet file")
)

// DefaultBatchRows is the rows per batch unless [WithBatchRows] says.
const DefaultBatchRows = 8192

// File is one input file.
type File struct {
	Path string
	Size int64
	// Hive holds the col=value pairs of the folders in the file's path as
	// given (the opened folder and the folders above it included),
	// decoded; nil when there is none.
	Hive map[string]string
	// HiveNames are the columns of Hive in folder order, outermost first.
	HiveNames []string
}

// Option configures [Open].
type Option func(*config) error

type config struct {
	batchRows int64
	mem       memory.Allocator
	consts    []constant
	hive      []arrow.Field
}

type constant struct {
	field arrow.Field
	value scalar.Scalar
}

// WithBatchRows sets the rows per batch. Default [DefaultBatchRows].
func WithBatchRows(n int64) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("%w: %d batch rows", ErrBadOption, n)
		}
		c.batchRows = n
		return nil
	}
}

// WithAllocator sets the Arrow allocator. The default reuses the memory
// of released batches for the next ones (see the package doc);
// memory.DefaultAllocator leaves every batch to the garbage collector.
func WithAllocator(mem memory.Allocator) Option {
	return func(c *config) error {
		if mem == nil {
			return fmt.Errorf("%w: nil allocator", ErrBadOption)
		}
		c.mem = mem
		return nil
	}
}

// WithConstant adds column field holding value in every row, when the
// files lack a column of that name (a file that has it keeps its own).
// value's type must be field's.
func WithConstant(field arrow.Field, value scalar.Scalar) Option {
	return func(c *config) error {
		if value == nil || !arrow.TypeEqual(value.DataType(), field.Type) {
			return fmt.Errorf("%w: constant %s: value type differs from %s", ErrBadOption, field.Name, field.Type)
		}
		c.consts = append(c.consts, constant{field, value})
		return nil
	}
}

// Reader reads Parquet files one after the other as one RecordReader.
type Reader struct {
	ctx    context.Context
	cfg    config
	files  []File
	next   int
	pf     *file.Reader
	cur    pqarrow.RecordReader
	fileSc *arrow.Schema // the files' schema
	sc     *arrow.Schema // with the added constants
	added  []constant    // the constants the files lack
	hive   []hiveColumn  // the WithHiveColumns columns the files lack
	rec    arrow.RecordBatch
	// batchStart is the position in its file of the current batch's
	// first row; fileRows counts the rows read of the open file.
	batchStart, fileRows int64
	err                  error
}

// Open opens paths (files, and folders read recursively; files and folders
// whose names start with "." or "_" inside a folder are skipped, like
// Spark's _SUCCESS) and reads the first file's schema. The caller
// releases the Reader.
func Open(ctx context.Context, paths []string, opts ...Option) (*Reader, error) {
	cfg := config{batchRows: DefaultBatchRows, mem: arrowmem.Default}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	files, err := List(paths)
	if err != nil {
		return nil, err
	}
	r := &Reader{ctx: ctx, cfg: cfg, files: files}
	if err := r.open(); err != nil {
		return nil, err
	}
	r.fileSc = r.cur.Schema()
	fields := slices.Clone(r.fileSc.Fields())
	for _, c := range cfg.consts {
		if r.fileSc.HasField(c.field.Name) {
			continue
		}
		r.added = append(r.added, c)
		fields = append(fields, c.field)
	}
	has := func(name string) bool {
		return r.fileSc.HasField(name) || slices.ContainsFunc(cfg.consts, func(c constant) bool { return c.field.Name == name })
	}
	if r.hive, err = hiveColumns(cfg.hive, files, has); err != nil {
		r.Release()
		return nil, err
	}
	for _, h := range r.hive {
		fields = append(fields, h.field)
	}
	md := r.fileSc.Metadata()
	r.sc = arrow.NewSchema(fields, &md)
	return r, nil
}

// List lists the .parquet files of paths as [Open] reads them.
func List(paths []string) ([]File, error) {
	var out []File
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("parquetfile: %w", err)
		}
		if !st.IsDir() {
			h, names := hive(p)
			out = append(out, File{Path: p, Size: st.Size(), Hive: h, HiveNames: names})
			continue
		}
		var found []File
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if path != p && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(name, ".parquet") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			h, names := hive(path)
			found = append(found, File{Path: path, Size: info.Size(), Hive: h, HiveNames: names})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("parquetfile: %w", err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%w in folder %s", ErrNoFiles, p)
		}
		slices.SortFunc(found, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, ErrNoFiles
	}
	return out, nil
}

// hive decodes the col=value folder names of path, and returns the
// columns in folder order (a column named twice takes the inner value).
func hive(path string) (m map[string]string, names []string) {
	rel := filepath.Dir(filepath.Clean(path))
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		if _, dup := m[unescape(k)]; !dup {
			names = append(names, unescape(k))
		}
		m[unescape(k)] = unescape(v)
	}
	return m, names
}

// unescape decodes Hive's %XX escapes; a malformed value stays as it is.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// Files lists the files the Reader reads.
func (r *Reader) Files() []File { return slices.Clone(r.files) }

// Hive returns the col=value pairs that every file's folders name alike
// (a column whose value differs between files is left out).
func (r *Reader) Hive() map[string]string {
	out := map[string]string{}
	for i, f := range r.files {
		for k, v := range f.Hive {
			if i == 0 {
				out[k] = v
			}
		}
		for k, v := range out {
			if f.Hive[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}

// Added lists the names of the [WithConstant] columns that the files lack
// and the Reader adds.
func (r *Reader) Added() []string {
	out := make([]string, len(r.added))
	for i, c := range r.added {
		out[i] = c.field.Name
	}
	return out
}

// HiveAdded lists the names of the [WithHiveColumns] columns that the
// files lack and the Reader fills from their folders.
func (r *Reader) HiveAdded() []string {
	out := make([]string, len(r.hive))
	for i, h := range r.hive {
		out[i] = h.field.Name
	}
	return out
}

// Position returns the file of the current batch and the position in
// that file (0 for its first row) of the batch's row i.
func (r *Reader) Position(i int) (path string, row int64) {
	if r.next == 0 {
		return "", int64(i)
	}
	return r.files[r.next-1].Path, r.batchStart + int64(i)
}

// readBufferBytes is the read buffer of each column: pages are read
// through it, so the memory of a reader follows its batch and page sizes,
// not the size of a file's column chunks (a row group of millions of
// rows holds tens of MB per column).
const readBufferBytes = 1 << 20

func (r *Reader) readProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(r.cfg.mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferBytes
	return props
}

func (r *Reader) open() (err error) {
	r.closeFile()
	f := r.files[r.next]
	r.next++
	var pf *file.Reader
	defer func() {
		if p := recover(); p != nil {
			if pf != nil {
				pf.Close()
			}
			err = fmt.Errorf("%w: %s: %v", ErrCorrupt, f.Path, p)
		}
	}()
	pf, err = file.OpenParquetFile(f.Path, false, file.WithReadProps(r.readProps()))
	if err != nil {
		return fmt.Errorf("parquetfile: %s: %w", f.Path, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: r.cfg.batchRows}, r.cfg.mem)
	if err != nil {
		pf.Close()
		return fmt.Errorf("parquetfile: %s: %w", f.Path, err)
	}
	rr, err := fr.GetRecordReader(r.ctx, nil, nil)
	if err != nil {
		pf.Close()
		return fmt.Errorf("parquetfile: %s: %w", f.Path, err)
	}
	if r.fileSc != nil && !r.fileSc.Equal(rr.Schema()) {
		rr.Release()
		pf.Close()
		return fmt.Errorf("%w: %s has %s, %s has %s", ErrSchemaMismatch, f.Path, rr.Schema(), r.files[0].Path, r.fileSc)
	}
	r.pf, r.cur = pf, rr
	r.fileRows = 0
	return nil
}

// advance moves the open file's reader to its next batch; a panic of
// arrow-go's reader on a damaged page is ErrCorrupt.
func (r *Reader) advance() (more bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			path, _ := r.Position(0)
			err = fmt.Errorf("%w: %s: %v", ErrCorrupt, path, p)
		}
	}()
	return r.cur.Next(), nil
}

func (r *Reader) closeFile() {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.pf != nil {
		r.pf.Close()
		r.pf = nil
	}
}

func (r *Reader) releaseRec() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
}

// Retain does nothing: the Reader has one owner, who releases it.
func (r *Reader) Retain() {}

// Release closes the open file and releases the current batch.
func (r *Reader) Release() {
	r.releaseRec()
	r.closeFile()
}

// Schema is the files' Arrow schema plus the added constant columns.
func (r *Reader) Schema() *arrow.Schema { return r.sc }

// RecordBatch is the current batch, valid until the next call to Next.
func (r *Reader) RecordBatch() arrow.RecordBatch { return r.rec }

// Record is RecordBatch.
//
// Deprecated: use RecordBatch (arrow-go's interface still has it).
func (r *Reader) Record() arrow.RecordBatch { return r.rec }

// Err is the error that ended Next, if any.
func (r *Reader) Err() error { return r.err }

// Next advances to the next batch, across files.
func (r *Reader) Next() bool {
	r.releaseRec()
	for r.err == nil && r.cur != nil {
		more, err := r.advance()
		if err != nil {
			r.err = err
			r.closeFile()
			return false
		}
		if more {
			b := r.cur.RecordBatch()
			r.batchStart = r.fileRows
			r.fileRows += b.NumRows()
			r.err = r.batch(b)
			return r.err == nil
		}
		if err := r.cur.Err(); err != nil {
			r.err = fmt.Errorf("parquetfile: %s: %w", r.files[r.next-1].Path, err)
			return false
		}
		if r.next == len(r.files) {
			r.closeFile()
			return false
		}
		r.err = r.open()
	}
	return false
}

// batch sets r.rec to b plus the constant columns.
func (r *Reader) batch(b arrow.RecordBatch) error {
	if len(r.added) == 0 && len(r.hive) == 0 {
		b.Retain()
		r.rec = b
		return nil
	}
	n := int(b.NumRows())
	cols := slices.Clone(b.Columns())
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for _, c := range r.added {
		a, err := scalar.MakeArrayFromScalar(c.value, n, r.cfg.mem)
		if err != nil {
			return fmt.Errorf("parquetfile: constant column %s: %w", c.field.Name, err)
		}
		made = append(made, a)
		cols = append(cols, a)
	}
	for _, h := range r.hive {
		a, err := scalar.MakeArrayFromScalar(h.values[r.next-1], n, r.cfg.mem)
		if err != nil {
			return fmt.Errorf("parquetfile: Hive column %s: %w", h.field.Name, err)
		}
		made = append(made, a)
		cols = append(cols, a)
	}
	r.rec = array.NewRecordBatch(r.sc, cols, int64(n))
	return nil
}

var _ array.RecordReader = (*Reader)(nil)
