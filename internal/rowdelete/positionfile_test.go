package rowdelete

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A position delete file is read in batches whatever its size and
// layout: file_path stored dictionary-encoded or plain, several data
// files interleaved across row groups with a dictionary each, and a
// file-scoped file read by its pos column alone. Every file holds more
// rows than one batch.
func TestReadPositionFile(t *testing.T) {
	const rows = 3*positionBatchRows + 17
	interleaved := func(r int) string { return fmt.Sprintf("s3://b/data/%05d.parquet", r%3) }
	one := func(int) string { return "s3://b/data/only.parquet" }
	for _, tc := range []struct {
		name       string
		pathOf     func(int) string
		dictionary bool
		scoped     string
	}{
		{"dictionary, three data files", interleaved, true, ""},
		{"plain, three data files", interleaved, false, ""},
		{"dictionary, one data file, not known scoped", one, true, ""},
		{"one data file, scoped", one, true, one(0)},
		{"plain, one data file, scoped", one, false, one(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writePositionFile(t, rows, tc.pathOf, tc.dictionary)
			want := map[string][]int64{}
			for r := range rows {
				want[tc.pathOf(r)] = append(want[tc.pathOf(r)], int64(r))
			}
			got, err := readPositionFile(iceio.LocalFS{}, path, tc.scoped)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
}

// A file without the position delete columns is an error, not an empty
// set of deletes.
func TestReadPositionFileRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "other.parquet")
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	writeParquet(t, path, b.NewRecordBatch(), parquet.NewWriterProperties())
	_, err := readPositionFile(iceio.LocalFS{}, path, "")
	assert.ErrorContains(t, err, "no file_path and pos columns")
}

// writePositionFile writes rows (file_path, pos) rows, row r deleting
// position r of pathOf(r), in row groups smaller than a batch.
func writePositionFile(t *testing.T, rows int, pathOf func(int) string, dictionary bool) string {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "file_path", Type: arrow.BinaryTypes.String},
		{Name: "pos", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for r := range rows {
		b.Field(0).(*array.StringBuilder).Append(pathOf(r))
		b.Field(1).(*array.Int64Builder).Append(int64(r))
	}
	path := filepath.Join(t.TempDir(), "deletes.parquet")
	props := parquet.NewWriterProperties(parquet.WithDictionaryDefault(dictionary), parquet.WithMaxRowGroupLength(positionBatchRows/2+3))
	writeParquet(t, path, b.NewRecordBatch(), props)
	return path
}

func writeParquet(t *testing.T, path string, rec arrow.RecordBatch, props *parquet.WriterProperties) {
	t.Helper()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}
