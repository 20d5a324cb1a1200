package sink_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// A service receives events at least once (here: a batch, then the same
// batch again with two new events, as after a crash before the
// acknowledgement), and appends them to a table on the embedded catalog.
// A new sink, as after a restart, resumes from the positions the table
// holds.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-sink-example-")
	defer os.RemoveAll(dir)
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	if err != nil {
		panic(err)
	}
	ident := icetable.Identifier{"app", "events"}
	_ = cat.CreateNamespace(ctx, icetable.Identifier{"app"}, nil)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "user", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "at", Type: iceberg.PrimitiveTypes.Timestamp, Required: true})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "day", Transform: iceberg.DayTransform{}})
	if _, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec)); err != nil {
		panic(err)
	}

	s, err := sink.Open(ctx, cat, ident, sink.WithCommitInterval(time.Second))
	if err != nil {
		panic(err)
	}
	from := sink.SourcePartition{Source: "queue:events", Partition: 0}
	deliver := func(s *sink.Sink, users ...string) {
		offsets := make([]int64, len(users))
		for i := range users {
			offsets[i] = int64(i) // the queue's offsets: the same message has the same offset
		}
		rec := events(users)
		defer rec.Release()
		if err := s.Write(ctx, from, offsets, rec); err != nil {
			panic(err)
		}
		res, err := s.Commit(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println("committed", res.AddedRows, "rows")
	}
	deliver(s, "ann", "bob", "cy")
	deliver(s, "ann", "bob", "cy", "dee", "eve") // redelivered, plus two new

	restarted, err := sink.Open(ctx, cat, ident)
	if err != nil {
		panic(err)
	}
	start, err := restarted.Start(ctx, from)
	if err != nil {
		panic(err)
	}
	fmt.Println("resume", from, "at offset", start[from]+1)
	// Output:
	// committed 3 rows
	// committed 2 rows
	// resume queue:events/0 at offset 5
}

// events is one row per user, all at the same instant.
func events(users []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{
		{Name: "user", Type: arrow.BinaryTypes.String},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil))
	defer b.Release()
	at := arrow.Timestamp(time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC).UnixMicro())
	for _, u := range users {
		b.Field(0).(*array.StringBuilder).Append(u)
		b.Field(1).(*array.TimestampBuilder).Append(at)
	}
	return b.NewRecordBatch()
}
