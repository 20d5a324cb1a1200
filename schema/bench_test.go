package schema

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
)

// BenchmarkApply applies a resolution to 1M rows in 8K-row batches: (a)
// input already in table order with the table's types, which Apply shares
// without copying; (b) reordered input with int32 columns promoted to long.
func BenchmarkApply(b *testing.B) {
	const rows, batchRows = 1 << 20, 8 << 10
	tbl := iceberg.NewSchema(0,
		must(1, "id", iceberg.PrimitiveTypes.Int64),
		opt(2, "a", iceberg.PrimitiveTypes.Int64),
		opt(3, "b", iceberg.PrimitiveTypes.Int64),
		opt(4, "c", iceberg.PrimitiveTypes.Float64),
		opt(5, "s", iceberg.PrimitiveTypes.String),
	)
	inOrder := arrow.NewSchema([]arrow.Field{
		req(fld("id", arrow.PrimitiveTypes.Int64, 1)), fld("a", arrow.PrimitiveTypes.Int64, 2),
		fld("b", arrow.PrimitiveTypes.Int64, 3), fld("c", arrow.PrimitiveTypes.Float64, 4),
		fld("s", arrow.BinaryTypes.String, 5),
	}, nil)
	promoted := arrow.NewSchema([]arrow.Field{
		fld("s", arrow.BinaryTypes.String, 5), fld("c", arrow.PrimitiveTypes.Float64, 4),
		fld("b", arrow.PrimitiveTypes.Int32, 3), fld("a", arrow.PrimitiveTypes.Int32, 2),
		req(fld("id", arrow.PrimitiveTypes.Int32, 1)),
	}, nil)

	for _, bc := range []struct {
		name string
		in   *arrow.Schema
	}{{"in-order", inOrder}, {"reordered-promoted", promoted}} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := Resolve(bc.in, tbl, nil, IgnoreUnknown)
			if err != nil {
				b.Fatal(err)
			}
			batches := benchBatches(bc.in, rows, batchRows)
			defer func() {
				for _, rec := range batches {
					rec.Release()
				}
			}()
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				for _, rec := range batches {
					out, err := r.Apply(ctx, rec)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func benchBatches(sc *arrow.Schema, rows, batchRows int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	bldr := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bldr.Release()
	for start := 0; start < rows; start += batchRows {
		for i := start; i < min(start+batchRows, rows); i++ {
			for k, f := range sc.Fields() {
				switch fb := bldr.Field(k).(type) {
				case *array.Int64Builder:
					fb.Append(int64(i))
				case *array.Int32Builder:
					fb.Append(int32(i))
				case *array.Float64Builder:
					fb.Append(float64(i) / 2)
				case *array.StringBuilder:
					fb.Append(fmt.Sprint(i % 1000))
				default:
					panic(f)
				}
			}
		}
		out = append(out, bldr.NewRecordBatch())
	}
	return out
}
