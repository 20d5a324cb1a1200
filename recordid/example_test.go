package recordid_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/icerun/icerun/recordid"
)

// Derive an event id from the event's source identity: the same event,
// redelivered, gets the same id on any machine.
func ExampleDeriver_Append() {
	ns := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://example.com/order-events"))
	d, err := recordid.New(ns, "order_id", "event_type")
	if err != nil {
		panic(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "order_id", Type: arrow.PrimitiveTypes.Int64}, {Name: "event_type", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, 7, 7}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"created", "paid", "created"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := d.Append(rec, "event_id")
	if err != nil {
		panic(err)
	}
	defer out.Release()
	ids := out.Column(2).(*array.String)
	fmt.Println(ids.Value(0) == ids.Value(2), ids.Value(0) == ids.Value(1), len(ids.Value(0)))
	// Output: true false 36
}
