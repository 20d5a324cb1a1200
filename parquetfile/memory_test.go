package parquetfile

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// largestRead is a file that records its largest read.
type largestRead struct {
	*os.File
	mu      sync.Mutex
	largest int
}

func (l *largestRead) ReadAt(p []byte, off int64) (int, error) {
	l.mu.Lock()
	l.largest = max(l.largest, len(p))
	l.mu.Unlock()
	return l.File.ReadAt(p, off)
}

// TestReaderMemoryFollowsPages: a file of one 2M-row row group (a 16 MB
// column chunk) is read through a buffer per column, never as a whole
// chunk into memory.
func TestReaderMemoryFollowsPages(t *testing.T) {
	const rows = 2_000_000
	path := filepath.Join(t.TempDir(), "big.parquet")
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range rows {
		b.Append(int64(i) * 7919)
	}
	arr := b.NewArray()
	b.Release()
	defer arr.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(idSchema, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	rec := array.NewRecordBatch(idSchema, []arrow.Array{arr}, rows)
	require.NoError(t, w.Write(rec))
	rec.Release()
	require.NoError(t, w.Close())

	src, err := os.Open(path)
	require.NoError(t, err)
	defer src.Close()
	reads := &largestRead{File: src}
	r := &Reader{cfg: config{mem: memory.DefaultAllocator, batchRows: DefaultBatchRows}}
	pf, err := file.NewParquetReader(reads, file.WithReadProps(r.readProps()))
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: DefaultBatchRows}, memory.DefaultAllocator)
	require.NoError(t, err)
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	require.NoError(t, err)
	defer rr.Release()
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	require.NoError(t, rr.Err())
	require.EqualValues(t, rows, n)
	if reads.largest > readBufferBytes {
		t.Errorf("reading a 16 MB column chunk read %d bytes at once, want at most %d", reads.largest, readBufferBytes)
	}
}
