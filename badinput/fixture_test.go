package badinput_test

import (
	"context"
	"io/fs"
	"slices"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
)

// labels is a table partitioned by identity(label string); scores by
// identity(score double).
var (
	labelSchema = iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "label", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	)
	labelSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "label", Transform: iceberg.IdentityTransform{}})
	scoreSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "score", Transform: iceberg.IdentityTransform{}})
)

// row of the labels/scores tables; nil is null.
type row struct {
	label *string
	score *float64
}

func str(s string) *string   { return &s }
func num(f float64) *float64 { return &f }
func rowsOf(rs ...row) []row { return rs }
func labelled(s string, n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{label: str(s), score: num(float64(i))}
	}
	return out
}

func labelReader(rs []row) array.RecordReader {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, r := range rs {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if r.label == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.label)
		}
		if r.score == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(*r.score)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	return rdr
}

// atEOF runs fn once when the input is exhausted: between the writing of
// the data files and the commit.
type atEOF struct {
	array.RecordReader
	fn func()
}

func (r *atEOF) Next() bool {
	ok := r.RecordReader.Next()
	if !ok && r.fn != nil {
		r.fn()
		r.fn = nil
	}
	return ok
}

// cutCatalog is a catalog that became unreachable after Open: every load
// and commit fails as a refused connection does.
type cutCatalog struct {
	catalog.Catalog
	cut bool
}

func (c *cutCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	if c.cut {
		return nil, &fs.PathError{Op: "dial", Path: "tcp 127.0.0.1:5432", Err: syscall.ECONNREFUSED}
	}
	c.cut = true
	return c.Catalog.LoadTable(ctx, ident)
}

// readOnlyCatalog loads tables whose file IO refuses every write, like a
// warehouse mounted read-only (tests run as root, so chmod would not do).
type readOnlyCatalog struct{ catalog.Catalog }

func (c readOnlyCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	fsF := func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		return readOnlyIO{fsys.(iceio.WriteFileIO)}, nil
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), fsF, c), nil
}

type readOnlyIO struct{ iceio.WriteFileIO }

func (readOnlyIO) Create(name string) (iceio.FileWriter, error) {
	return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrPermission}
}

func (readOnlyIO) WriteFile(name string, _ []byte) error {
	return &fs.PathError{Op: "write", Path: name, Err: fs.ErrPermission}
}

func (readOnlyIO) Remove(name string) error {
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrPermission}
}

// switchingReader yields the batches of its reader, then tail: batches
// whose schema is not the reader's Schema(), as a misbehaving producer
// sends them.
type switchingReader struct {
	array.RecordReader
	tail  []arrow.RecordBatch
	owned []arrow.RecordBatch
	cur   arrow.RecordBatch
}

func (r *switchingReader) Next() bool {
	if r.RecordReader.Next() {
		r.cur = r.RecordReader.RecordBatch()
		return true
	}
	if len(r.tail) == 0 {
		r.cur = nil
		return false
	}
	r.cur, r.tail = r.tail[0], r.tail[1:]
	return true
}

func (r *switchingReader) RecordBatch() arrow.RecordBatch { return r.cur }
func (r *switchingReader) Record() arrow.RecordBatch      { return r.cur }

func (r *switchingReader) Release() {
	for _, b := range r.owned {
		b.Release()
	}
	r.owned = nil
	r.RecordReader.Release()
}

// ordersThen is 48 orders of day0 in batches of 16, then a batch of 16
// more built by the orders' batch and reshaped by reshape.
func ordersThen(reshape func(rec arrow.RecordBatch) arrow.RecordBatch) func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
	return func(*testing.T, catalog.Catalog, icetable.Identifier) array.RecordReader {
		os := orderdata.Day(day0, 64)
		rec := orderdata.Batch(orderdata.ArrowSchema(), os[48:])
		defer rec.Release()
		last := reshape(rec)
		return &switchingReader{RecordReader: orderdata.Reader(os[:48], 16), tail: []arrow.RecordBatch{last}, owned: []arrow.RecordBatch{last}}
	}
}

// swapColumns returns rec with columns i and j swapped, names included.
func swapColumns(i, j int) func(rec arrow.RecordBatch) arrow.RecordBatch {
	return func(rec arrow.RecordBatch) arrow.RecordBatch {
		fields, cols := rec.Schema().Fields(), slices.Clone(rec.Columns())
		fields[i], fields[j] = fields[j], fields[i]
		cols[i], cols[j] = cols[j], cols[i]
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	}
}

// largeStrings returns rec with string column c as a large_string column.
func largeStrings(c int) func(rec arrow.RecordBatch) arrow.RecordBatch {
	return func(rec arrow.RecordBatch) arrow.RecordBatch {
		b := array.NewLargeStringBuilder(memory.DefaultAllocator)
		defer b.Release()
		src := rec.Column(c).(*array.String)
		for i := range src.Len() {
			b.Append(src.Value(i))
		}
		col := b.NewArray()
		defer col.Release()
		fields, cols := rec.Schema().Fields(), slices.Clone(rec.Columns())
		fields[c].Type, cols[c] = arrow.BinaryTypes.LargeString, col
		return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	}
}
