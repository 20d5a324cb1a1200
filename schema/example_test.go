package schema_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/schema"
)

// Input columns in another order than the table's, one under the name the
// column had before a rename, one of a narrower type, one the table lacks.
func ExampleResolve() {
	old := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "qty", Type: iceberg.PrimitiveTypes.Int64},
	)
	// "qty" was renamed "quantity"; the name mapping keeps "qty" as an alias.
	tbl := iceberg.NewSchema(1,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "quantity", Type: iceberg.PrimitiveTypes.Int64},
	)
	nm, err := iceberg.UpdateNameMapping(old.NameMapping(), map[int]iceberg.NestedField{2: tbl.Field(1)}, nil)
	if err != nil {
		panic(err)
	}

	in := arrow.NewSchema([]arrow.Field{
		{Name: "qty", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	r, err := schema.Resolve(in, tbl, nm, schema.IgnoreUnknown)
	if err != nil {
		panic(err)
	}

	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, in,
		strings.NewReader(`[{"qty": 5, "note": "x", "id": 1}, {"qty": null, "note": "y", "id": 2}]`))
	if err != nil {
		panic(err)
	}
	defer rec.Release()
	out, err := r.Apply(context.Background(), rec)
	if err != nil {
		panic(err)
	}
	defer out.Release()

	fmt.Println("ignored:", r.Ignored())
	for i, f := range out.Schema().Fields() {
		fmt.Println(f.Name, f.Type, out.Column(i))
	}
	// Output:
	// ignored: [note]
	// id int64 [1 2]
	// quantity int64 [5 (null)]
}
