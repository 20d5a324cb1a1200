package badinput_test

import (
	"context"
	"io/fs"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
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
