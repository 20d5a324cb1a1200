package catalogtest

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Reader builds a one-batch reader of fields whose n rows fill appends,
// one call per row: inputs of any shape, including broken ones.
func Reader(fields []arrow.Field, n int, fill func(b *array.RecordBuilder, row int)) array.RecordReader {
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		fill(b, i)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return rdr
}

// FailingReader yields the batches of its RecordReader, then reports Err:
// a source that breaks mid-stream.
type FailingReader struct {
	array.RecordReader
	Failure error
}

// Err reports the failure.
func (r *FailingReader) Err() error { return r.Failure }
