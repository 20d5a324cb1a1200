package schema

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// fld returns an Arrow field; id < 0 means no PARQUET:field_id.
func fld(name string, dt arrow.DataType, id int) arrow.Field {
	f := arrow.Field{Name: name, Type: dt, Nullable: true}
	if id >= 0 {
		f.Metadata = arrow.NewMetadata([]string{table.ArrowParquetFieldIDKey}, []string{strconv.Itoa(id)})
	}
	return f
}

func req(f arrow.Field) arrow.Field { f.Nullable = false; return f }

func opt(id int, name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: t}
}

func must(id int, name string, t iceberg.Type) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: name, Type: t, Required: true}
}

// orders is the table schema most tests write into.
var orders = iceberg.NewSchema(0,
	must(1, "id", iceberg.PrimitiveTypes.Int64),
	opt(2, "name", iceberg.PrimitiveTypes.String),
	opt(3, "amount", iceberg.DecimalTypeOf(10, 2)),
	opt(4, "ts", iceberg.PrimitiveTypes.TimestampTz),
	opt(5, "addr", &iceberg.StructType{FieldList: []iceberg.NestedField{
		must(6, "city", iceberg.PrimitiveTypes.String),
		opt(7, "zip", iceberg.PrimitiveTypes.Int32),
	}}),
	opt(8, "tags", &iceberg.ListType{ElementID: 9, Element: iceberg.PrimitiveTypes.String}),
	opt(10, "attrs", &iceberg.MapType{KeyID: 11, KeyType: iceberg.PrimitiveTypes.String,
		ValueID: 12, ValueType: iceberg.PrimitiveTypes.Int64}),
)

// checked returns a context whose allocator fails the test on a leak.
func checked(t testing.TB) context.Context {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return compute.WithAllocator(context.Background(), mem)
}

// batch builds a record batch of sc from JSON rows.
func batch(t testing.TB, ctx context.Context, sc *arrow.Schema, rows string) arrow.RecordBatch {
	t.Helper()
	rec, _, err := array.RecordFromJSON(compute.GetAllocator(ctx), sc, strings.NewReader(rows))
	if err != nil {
		t.Fatalf("RecordFromJSON(%s) = %v", rows, err)
	}
	return rec
}

// rows renders a batch as JSON rows, one per line.
func rows(t testing.TB, rec arrow.RecordBatch) string {
	t.Helper()
	var buf bytes.Buffer
	if err := array.RecordToJSON(rec, &buf); err != nil {
		t.Fatalf("RecordToJSON = %v", err)
	}
	return strings.TrimSpace(buf.String())
}
