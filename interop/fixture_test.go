//go:build interop

package interop

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icerun/icerun/table"
)

// batch builds one record of n rows from fill, called once per row.
func batch(fields []arrow.Field, n int, fill func(b *array.RecordBuilder, row int)) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range n {
		fill(b, i)
	}
	return b.NewRecordBatch()
}

// reader reads the records.
func reader(t testing.TB, recs ...arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

// open opens an icerun writer on table name of c.
func open(t testing.TB, c *Catalog, name string, opts ...table.Option) *table.Writer {
	t.Helper()
	w, err := table.Open(context.Background(), c.Cat, c.Ident(name), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
