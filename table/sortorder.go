package table

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// sortOrder is a table's default sort order compiled against the layout
// of the batches a write receives: the rows of every data file the write
// makes are in this order, and the files say so (sort_order_id), as Java
// writers do.
//
// Supported are identity sort fields on top-level primitive columns of
// any type below; a table whose order has another transform (bucket,
// truncate, day...) or column is written unsorted, and its files make no
// claim.
type sortOrder struct {
	id   int
	cols []sortColumn
}

type sortColumn struct {
	idx        int // column of the batch
	desc       bool
	nullsFirst bool
	compare    func(a arrow.Array, i int, b arrow.Array, j int) int // non-null values
}

// newSortOrder compiles md's default sort order for batches of schema sc.
// It returns nil when the table is unsorted or its order is not
// supported.
func newSortOrder(md icetable.Metadata, sc *arrow.Schema) *sortOrder {
	order := md.SortOrder()
	if order.IsUnsorted() {
		return nil
	}
	so := &sortOrder{id: order.OrderID()}
	for _, f := range order.Fields() {
		if _, ok := f.Transform.(iceberg.IdentityTransform); !ok || len(f.SourceIDs) != 1 {
			return nil
		}
		idx := columnOf(md.CurrentSchema(), sc, f.SourceID())
		if idx < 0 {
			return nil
		}
		c := valueCompare(sc.Field(idx).Type)
		if c == nil {
			return nil
		}
		so.cols = append(so.cols, sortColumn{idx: idx, desc: f.Direction == icetable.SortDESC, nullsFirst: f.NullOrder == icetable.NullsFirst, compare: c})
	}
	return so
}

// columnOf is the index in sc of the top-level table column id, found by
// its PARQUET:field_id, else by its name; -1 when absent or nested.
func columnOf(sch *iceberg.Schema, sc *arrow.Schema, id int) int {
	for i, f := range sc.Fields() {
		if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok && v == strconv.Itoa(id) {
			return i
		}
	}
	for _, tf := range sch.Fields() {
		if tf.ID == id {
			return slices.IndexFunc(sc.Fields(), func(f arrow.Field) bool { return f.Name == tf.Name })
		}
	}
	return -1
}

// compare orders row i of a against row j of b (batches of the same
// layout): negative when a's row comes first.
func (so *sortOrder) compare(a arrow.RecordBatch, i int, b arrow.RecordBatch, j int) int {
	for _, c := range so.cols {
		x, y := a.Column(c.idx), b.Column(c.idx)
		xn, yn := x.IsNull(i), y.IsNull(j)
		switch {
		case xn && yn:
			continue
		case xn || yn:
			if xn == c.nullsFirst {
				return -1
			}
			return 1
		}
		r := c.compare(x, i, y, j)
		if c.desc {
			r = -r
		}
		if r != 0 {
			return r
		}
	}
	return 0
}

// sorted reports whether rec's rows are in order.
func (so *sortOrder) sorted(rec arrow.RecordBatch) bool {
	for i := 1; i < int(rec.NumRows()); i++ {
		if so.compare(rec, i-1, rec, i) > 0 {
			return false
		}
	}
	return true
}

// valueCompare compares two non-null values of type dt the way Iceberg
// orders them (Java's comparators): numbers by value, with -0.0 before
// 0.0 and NaN after every other float; strings and binary by unsigned
// bytes. nil for a type it does not order.
func valueCompare(dt arrow.DataType) func(a arrow.Array, i int, b arrow.Array, j int) int {
	switch dt.ID() {
	case arrow.BOOL:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return cmp.Compare(boolInt(a.(*array.Boolean).Value(i)), boolInt(b.(*array.Boolean).Value(j)))
		}
	case arrow.INT8:
		return ordered[int8, *array.Int8]()
	case arrow.INT16:
		return ordered[int16, *array.Int16]()
	case arrow.INT32:
		return ordered[int32, *array.Int32]()
	case arrow.INT64:
		return ordered[int64, *array.Int64]()
	case arrow.UINT8:
		return ordered[uint8, *array.Uint8]()
	case arrow.UINT16:
		return ordered[uint16, *array.Uint16]()
	case arrow.UINT32:
		return ordered[uint32, *array.Uint32]()
	case arrow.UINT64:
		return ordered[uint64, *array.Uint64]()
	case arrow.DATE32:
		return ordered[arrow.Date32, *array.Date32]()
	case arrow.DATE64:
		return ordered[arrow.Date64, *array.Date64]()
	case arrow.TIME32:
		return ordered[arrow.Time32, *array.Time32]()
	case arrow.TIME64:
		return ordered[arrow.Time64, *array.Time64]()
	case arrow.TIMESTAMP:
		return ordered[arrow.Timestamp, *array.Timestamp]()
	case arrow.FLOAT32:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return floatCompare(float64(a.(*array.Float32).Value(i)), float64(b.(*array.Float32).Value(j)))
		}
	case arrow.FLOAT64:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return floatCompare(a.(*array.Float64).Value(i), b.(*array.Float64).Value(j))
		}
	case arrow.STRING:
		return ordered[string, *array.String]()
	case arrow.LARGE_STRING:
		return ordered[string, *array.LargeString]()
	case arrow.BINARY:
		return bytesOrdered[*array.Binary]()
	case arrow.LARGE_BINARY:
		return bytesOrdered[*array.LargeBinary]()
	case arrow.FIXED_SIZE_BINARY:
		return bytesOrdered[*array.FixedSizeBinary]()
	case arrow.DECIMAL128:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return a.(*array.Decimal128).Value(i).Cmp(b.(*array.Decimal128).Value(j))
		}
	}
	return nil
}

func ordered[T cmp.Ordered, A interface{ Value(int) T }]() func(a arrow.Array, i int, b arrow.Array, j int) int {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return cmp.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

func bytesOrdered[A interface{ Value(int) []byte }]() func(a arrow.Array, i int, b arrow.Array, j int) int {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return bytes.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

// floatCompare is Java's Double.compare: -0.0 < 0.0, NaN greatest.
func floatCompare(x, y float64) int {
	switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	if c := cmp.Compare(x, y); c != 0 {
		return c
	}
	return cmp.Compare(boolInt(!math.Signbit(x)), boolInt(!math.Signbit(y)))
}
