//go:build interop

package interop

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

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

// regionTable creates table name of c: a long id and a string region,
// identity-partitioned by region, format v2. It returns a builder of n
// rows of region with ids from from on.
func regionTable(t *testing.T, c *Catalog, name string) func(region string, from, n int) arrow.RecordBatch {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	c.CreateTable(t, name, sch, spec, iceberg.Properties{"format-version": "2"})
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}}
	return func(region string, from, n int) arrow.RecordBatch {
		return batch(fields, n, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(int64(from + i))
			b.Field(1).(*array.StringBuilder).Append(region)
		})
	}
}
