package table_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// BenchmarkReplaceResolution measures what schema resolution costs on the
// write path: the same rows replaced from input already in table layout
// (field IDs, table order, table types) and from input in reverse column
// order with customer_id as int32 (promoted to long).
func BenchmarkReplaceResolution(b *testing.B) {
	tableLayout, err := icetable.SchemaToArrowSchema(orderdata.Schema, nil, true, false)
	if err != nil {
		b.Fatal(err)
	}
	var inOrder, reordered []arrow.RecordBatch
	for lo := 0; lo < benchRows; lo += 8192 {
		src := orderdata.Batch(orderdata.ArrowSchema(), ordersSlice(lo, min(lo+8192, benchRows)))
		inOrder = append(inOrder, array.NewRecordBatch(tableLayout, src.Columns(), src.NumRows()))
		narrow, err := compute.CastArray(context.Background(), src.Column(1), compute.SafeCastOptions(arrow.PrimitiveTypes.Int32))
		if err != nil {
			b.Fatal(err)
		}
		var fields []arrow.Field
		var cols []arrow.Array
		for i := src.NumCols() - 1; i >= 0; i-- {
			f, col := src.Schema().Field(int(i)), src.Column(int(i))
			if i == 1 {
				f.Type, col = arrow.PrimitiveTypes.Int32, narrow
			}
			fields, cols = append(fields, f), append(cols, col)
		}
		reordered = append(reordered, array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, src.NumRows()))
	}
	for name, batches := range map[string][]arrow.RecordBatch{"table-order": inOrder, "reordered-promoted": reordered} {
		b.Run(name, func(b *testing.B) {
			cat, ident, _ := benchTable(b)
			i := 0
			for b.Loop() {
				i++
				w, err := table.Open(context.Background(), cat, ident, table.WithCodeVersion("v"+strconv.Itoa(i)))
				if err != nil {
					b.Fatal(err)
				}
				key, _ := w.Key("event_date=2026-07-14")
				rdr, _ := array.NewRecordReader(batches[0].Schema(), batches)
				if _, err := w.ReplacePartition(context.Background(), key, rdr); err != nil {
					b.Fatal(err)
				}
				rdr.Release()
			}
			b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func ordersSlice(lo, hi int) []orderdata.Order {
	out := make([]orderdata.Order, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, orderdata.At(day0, i, benchRows))
	}
	return out
}
