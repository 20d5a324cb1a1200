package rowdelete

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
)

// positionBatchRows is how many rows of a position delete file are
// decoded at a time: a file is read in batches, never whole.
const positionBatchRows = 64 << 10

// readPositionFile reads the Parquet position delete file path: the
// positions it deletes of each data file its file_path column names.
//
// Its memory is the positions (8 bytes each) and one batch: when scoped
// names the one data file every row deletes from (fileScoped), only the
// pos column is read; otherwise file_path is read as a dictionary (the
// writers store it dictionary-encoded, one value per data file), so a
// batch holds 4-byte indices and each distinct path once, not one string
// per deleted row.
func readPositionFile(fsys iceio.IO, path, scoped string) (map[string][]int64, error) {
	in, err := fsys.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	pr, err := file.NewParquetReader(in)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	sc := pr.MetaData().Schema
	pathCol, posCol := sc.ColumnIndexByName("file_path"), sc.ColumnIndexByName("pos")
	if pathCol < 0 || posCol < 0 {
		return nil, errors.New("no file_path and pos columns")
	}
	props := pqarrow.ArrowReadProperties{BatchSize: positionBatchRows}
	props.SetReadDict(pathCol, true)
	fr, err := pqarrow.NewFileReader(pr, props, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	cols := []int{pathCol, posCol}
	if scoped != "" {
		cols = []int{posCol}
	}
	rr, err := fr.GetRecordReader(context.Background(), cols, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	m, names := map[string][]int64{}, paths{}
	if scoped != "" {
		m[scoped] = make([]int64, 0, pr.NumRows())
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		if scoped != "" {
			err = addScoped(m, scoped, rec.Column(0))
		} else {
			err = addNamed(m, names, rec.Column(0), rec.Column(1))
		}
		if err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return m, nil
}

// addScoped appends the positions pos to m[scoped].
func addScoped(m map[string][]int64, scoped string, pos arrow.Array) error {
	q, ok := pos.(*array.Int64)
	if !ok {
		return fmt.Errorf("pos %s: want int64", pos.DataType())
	}
	m[scoped] = append(m[scoped], q.Int64Values()...)
	return nil
}

// addNamed appends each position of pos to m under its row's file_path,
// read as a dictionary or (from a writer that stored it plainly and a
// reader that decoded it so) as strings.
func addNamed(m map[string][]int64, names paths, pathCol, pos arrow.Array) error {
	q, ok := pos.(*array.Int64)
	if !ok {
		return fmt.Errorf("pos %s: want int64", pos.DataType())
	}
	switch p := pathCol.(type) {
	case *array.Dictionary:
		values, ok := p.Dictionary().(*array.String)
		if !ok {
			return fmt.Errorf("file_path %s: want a string dictionary", p.DataType())
		}
		keys := make([]string, values.Len()) // dictionary index -> key of m
		for r := 0; r < p.Len(); r++ {
			i := p.GetValueIndex(r)
			if keys[i] == "" {
				keys[i] = names.of(values.Value(i))
			}
			m[keys[i]] = append(m[keys[i]], q.Value(r))
		}
	case *array.String:
		for r := 0; r < p.Len(); r++ {
			k := names.of(p.Value(r))
			m[k] = append(m[k], q.Value(r))
		}
	default:
		return fmt.Errorf("file_path %s: want string", pathCol.DataType())
	}
	return nil
}

// paths interns the file paths of one position delete file: a key of
// its map is a copy, never a string aliasing a column buffer (assigning
// to a map under an equal string stores that string as the key, and
// would keep the whole buffer alive).
type paths map[string]string

// of is path's copy.
func (p paths) of(path string) string {
	if k, ok := p[path]; ok {
		return k
	}
	k := strings.Clone(path)
	p[k] = k
	return k
}
