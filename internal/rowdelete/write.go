package rowdelete

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"
)

// Field ids of a position delete file's columns (the spec's reserved ids).
const (
	posDeleteFilePathID = 2147483546
	posDeletePosID      = 2147483545
)

// Writer writes the delete files of one partition's row delta:
// deletion vectors (Puffin, deletion-vector-v1, with iceberg-go's
// dv.DVWriter) on format v3, file-scoped position delete files (Parquet,
// one per data file, sorted by position) on v2. iceberg-go v0.7.0 has no public writer of
// position delete files (its Transaction.Delete writes them internally),
// so they are written here with arrow-go's pqarrow.
type Writer struct {
	tbl     *icetable.Table
	fsys    iceio.WriteFileIO
	spec    iceberg.PartitionSpec
	values  map[int]any // the partition's values, by partition field id
	folder  string      // the partition's data folder ("" unpartitioned)
	written []string    // every file created, for removal
}

// NewWriter returns a Writer of the delete files of one partition of tbl
// (its current spec): values are the partition's values by partition
// field id, folder its data folder under the table's data location (""
// for an unpartitioned table).
func NewWriter(ctx context.Context, tbl *icetable.Table, values map[int]any, folder string) (*Writer, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("table file IO %T cannot write", fsys)
	}
	return &Writer{tbl: tbl, fsys: wfs, spec: tbl.Spec(), values: values, folder: folder}, nil
}

// location is where a new delete file named after a fresh UUID goes: the
// partition's data folder.
func (w *Writer) location(ext string) (string, error) {
	locs, err := w.tbl.LocationProvider()
	if err != nil {
		return "", err
	}
	name := uuid.NewString() + "-deletes." + ext
	if w.folder != "" {
		name = path.Join(w.folder, name)
	}
	loc := locs.NewDataLocation(name)
	w.written = append(w.written, loc)
	return loc, nil
}

// Write writes the delete files that delete the hits of found. It
// returns them, the delete files they supersede (deletion vectors, or
// file-scoped position delete files, whose positions they hold too), and
// the number of rows they newly delete.
func (w *Writer) Write(ctx context.Context, found []Located) (deletes, superseded []iceberg.DataFile, rows int64, err error) {
	if len(found) == 0 {
		return nil, nil, 0, nil
	}
	slices.SortFunc(found, func(a, b Located) int { return strings.Compare(a.task.File.FilePath(), b.task.File.FilePath()) })
	for _, l := range found {
		rows += int64(len(l.hit))
	}
	if w.tbl.Metadata().Version() >= 3 {
		deletes, superseded, err = w.vectors(ctx, found)
	} else {
		deletes, superseded, err = w.positionFiles(found)
	}
	return deletes, superseded, rows, err
}

// vectors writes one Puffin file with a deletion vector per data file of
// found: its hits and every position deleted before (its old vector and
// position deletes), so that each data file keeps one vector; the old
// vectors are superseded.
func (w *Writer) vectors(ctx context.Context, found []Located) (deletes, superseded []iceberg.DataFile, err error) {
	md := w.tbl.Metadata()
	dw := dv.NewDVWriter(w.fsys, func(id int32) *iceberg.PartitionSpec { return md.PartitionSpecByID(int(id)) })
	for _, l := range found {
		f := l.task.File
		dw.Load(f.FilePath(), l.existing, f.SpecID(), w.values)
		if err := dw.Add(f.FilePath(), l.hit, f.SpecID(), w.values); err != nil {
			return nil, nil, err
		}
		for _, d := range slices.Concat(l.task.DeletionVectorFiles, l.task.DeleteFiles) {
			if icetable.IsDeletionVector(d) {
				superseded = append(superseded, d)
			}
		}
	}
	loc, err := w.location("puffin")
	if err != nil {
		return nil, nil, err
	}
	deletes, err = dw.Flush(ctx, loc)
	return deletes, superseded, err
}

// positionFiles writes a file-scoped position delete file per data file
// of found: its hits and the positions its file-scoped position delete
// files deleted before (carried), which it supersedes, so that a data
// file keeps at most one such file however many changes hit it, and a
// reader applies one delete file per data file, as with a deletion
// vector (Java's Spark writes v2 deletes so with file granularity).
// Position delete files of several data files (other writers') stay:
// their positions are not repeated.
func (w *Writer) positionFiles(found []Located) (deletes, superseded []iceberg.DataFile, err error) {
	for _, l := range found {
		pos, owned := l.hit, false
		if l.carried != nil && !l.carried.IsEmpty() {
			owned = true
			pos = make([]int64, 0, int(l.carried.Cardinality())+len(l.hit))
			for p := range l.carried.Positions() {
				pos = append(pos, int64(p))
			}
			pos = append(pos, l.hit...)
			slices.Sort(pos)
			pos = slices.Compact(pos)
		}
		f, err := w.positionFile(l.task.File.FilePath(), pos, owned)
		if err != nil {
			return nil, nil, err
		}
		deletes = append(deletes, f)
		superseded = append(superseded, l.scoped...)
	}
	return deletes, superseded, nil
}

// positionFile writes a position delete file of the ascending positions
// pos of data file path. The delete-file cache keeps pos itself when it
// is owned (nothing else holds it), else a copy.
func (w *Writer) positionFile(path string, pos []int64, owned bool) (iceberg.DataFile, error) {
	fieldID := func(id int) arrow.Metadata {
		return arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{fmt.Sprint(id)})
	}
	// file_path is one value repeated: handed to the Parquet writer as a
	// dictionary of that one value (the column is dictionary-encoded in
	// the file either way), so it is neither copied nor hashed per row.
	pathType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: pathType, Metadata: fieldID(posDeleteFilePathID)},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: fieldID(posDeletePosID)},
	}, nil)
	dictB := array.NewStringBuilder(memory.DefaultAllocator)
	dictB.Append(path)
	dict := dictB.NewArray()
	dictB.Release()
	defer dict.Release()
	idxData := array.NewData(arrow.PrimitiveTypes.Int32, len(pos), []*memory.Buffer{nil, memory.NewBufferBytes(make([]byte, 4*len(pos)))}, nil, 0, 0)
	idx := array.NewInt32Data(idxData)
	idxData.Release()
	defer idx.Release()
	paths := array.NewDictionaryArray(pathType, idx, dict)
	defer paths.Release()
	// pos is wrapped, not copied: the writer only reads it.
	posData := array.NewData(arrow.PrimitiveTypes.Int64, len(pos), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(pos))}, nil, 0, 0)
	poss := array.NewInt64Data(posData)
	posData.Release()
	defer poss.Release()
	rec := array.NewRecordBatch(sc, []arrow.Array{paths, poss}, int64(len(pos)))
	defer rec.Release()
	loc, err := w.location("parquet")
	if err != nil {
		return nil, err
	}
	size, err := w.writeParquet(loc, rec)
	if err != nil {
		return nil, err
	}
	if !owned {
		pos = slices.Clone(pos)
	}
	positions.put(loc, map[string][]int64{path: pos})
	n := int64(len(pos))
	le := func(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }
	fb, err := iceberg.NewDataFileBuilder(w.spec, iceberg.EntryContentPosDeletes, loc, iceberg.ParquetFile, w.values, nil, nil, n, size)
	if err != nil {
		return nil, err
	}
	fb.LowerBoundValues(map[int][]byte{posDeleteFilePathID: []byte(path), posDeletePosID: le(pos[0])}).
		UpperBoundValues(map[int][]byte{posDeleteFilePathID: []byte(path), posDeletePosID: le(pos[len(pos)-1])}).
		ValueCounts(map[int]int64{posDeleteFilePathID: n, posDeletePosID: n}).
		NullValueCounts(map[int]int64{posDeleteFilePathID: 0, posDeletePosID: 0}).
		ReferencedDataFile(path)
	return fb.Build(), nil
}

// writeParquet writes rec to a new Parquet file at loc and returns its size.
func (w *Writer) writeParquet(loc string, rec arrow.RecordBatch) (_ int64, err error) {
	out, err := w.fsys.Create(loc)
	if err != nil {
		return 0, err
	}
	cnt := &byteCounter{w: out}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	// Only file_path is dictionary-encoded: the positions are distinct,
	// and a dictionary of them would be built only to be dropped.
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("file_path", true))
	pw, err := pqarrow.NewFileWriter(rec.Schema(), cnt, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return 0, err
	}
	if err := pw.Write(rec); err != nil {
		_ = pw.Close()
		return 0, err
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	return cnt.n, nil
}

// Remove deletes every file the writer created.
func (w *Writer) Remove() error {
	var errs []error
	for _, p := range w.written {
		if err := w.fsys.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// byteCounter counts the bytes written through it.
type byteCounter struct {
	w io.Writer
	n int64
}

func (c *byteCounter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
