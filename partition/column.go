package partition

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
)

// fieldIDKey is the Arrow field metadata key holding the Iceberg field id,
// as iceberg-go's table.SchemaToArrowSchema writes it.
const fieldIDKey = "PARQUET:field_id"

// columnPaths maps every field id of in, top-level and inside structs, to
// its path of child indices.
func columnPaths(in *arrow.Schema) map[int][]int {
	paths := make(map[int][]int)
	var walk func(fields []arrow.Field, prefix []int)
	walk = func(fields []arrow.Field, prefix []int) {
		for i, f := range fields {
			path := append(append([]int{}, prefix...), i)
			if s, ok := f.Metadata.GetValue(fieldIDKey); ok {
				if id, err := strconv.Atoi(s); err == nil {
					paths[id] = path
				}
			}
			if st, ok := f.Type.(*arrow.StructType); ok {
				walk(st.Fields(), path)
			}
		}
	}
	walk(in.Fields(), nil)

	return paths
}

// fieldAt returns the Arrow field at path.
func fieldAt(in *arrow.Schema, path []int) arrow.Field {
	f := in.Field(path[0])
	for _, i := range path[1:] {
		f = f.Type.(*arrow.StructType).Field(i)
	}

	return f
}

// nulls tells which rows of a leaf column are null, counting null parents.
type nulls struct {
	leaf   arrow.Array
	parent []bool // true where a parent struct is null; nil when none is
}

func (n nulls) any() bool     { return n.parent != nil || n.leaf.NullN() > 0 }
func (n nulls) at(i int) bool { return (n.parent != nil && n.parent[i]) || n.leaf.IsNull(i) }

// column returns the leaf column at path and its nulls.
func column(rec arrow.RecordBatch, path []int) (arrow.Array, nulls, error) {
	if path[0] >= int(rec.NumCols()) {
		return nil, nulls{}, fmt.Errorf("record has %d columns, want more than %d", rec.NumCols(), path[0])
	}
	col := rec.Column(path[0])
	var parent []bool
	for _, i := range path[1:] {
		st, ok := col.(*array.Struct)
		if !ok || i >= st.NumField() {
			return nil, nulls{}, fmt.Errorf("column %v is %s, not a struct", path, col.DataType())
		}
		if st.NullN() > 0 {
			if parent == nil {
				parent = make([]bool, st.Len())
			}
			for r := range parent {
				parent[r] = parent[r] || st.IsNull(r)
			}
		}
		col = st.Field(i)
	}

	return col, nulls{leaf: col, parent: parent}, nil
}

// sourceValue is row i of col in the Go form iceberg-go's transforms take;
// nil when null. It is the slow path, used for bucket and for messages.
func sourceValue(col arrow.Array, n nulls, i int, src iceberg.Type) any {
	if n.at(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Decimal128:
		return iceberg.Decimal{Val: a.Value(i), Scale: int(a.DataType().(*arrow.Decimal128Type).Scale)}
	case *array.Date32:
		return iceberg.Date(a.Value(i))
	case *array.Time64:
		return iceberg.Time(a.Value(i))
	case *array.Timestamp:
		switch src.(type) {
		case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
			return iceberg.TimestampNano(a.Value(i))
		}

		return iceberg.Timestamp(a.Value(i))
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return a.Value(i)
	case *array.LargeBinary:
		return a.Value(i)
	case *extensions.UUIDArray:
		return a.Value(i)
	case *array.FixedSizeBinary:
		return a.Value(i)
	}

	return nil
}
