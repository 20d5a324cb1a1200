package sink_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/sink"
)

// Request handlers of an HTTP service hand their events to one ingester
// from many goroutines; each returns once its events are committed. A
// client's retry carries the same id (derived from the client and its
// sequence number) and is dropped.
func ExampleOpenIngester() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "icerun-ingester-example-")
	defer os.RemoveAll(dir)
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	if err != nil {
		panic(err)
	}
	ident := icetable.Identifier{"app", "clicks"}
	_ = cat.CreateNamespace(ctx, icetable.Identifier{"app"}, nil)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "client", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	if _, err := cat.CreateTable(ctx, ident, sch); err != nil {
		panic(err)
	}

	in, err := sink.OpenIngester(ctx, cat, ident, sink.SourcePartition{Source: "http:clicks", Partition: 0},
		sink.WithKey("id"), sink.WithCommitInterval(50*time.Millisecond))
	if err != nil {
		panic(err)
	}
	ns := uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://example.com/clicks"))
	handle := func(client string, seq int64) error { // one request
		sc := arrow.NewSchema([]arrow.Field{{Name: "client", Type: arrow.BinaryTypes.String}, {Name: "seq", Type: arrow.PrimitiveTypes.Int64}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(client)
		b.Field(1).(*array.Int64Builder).Append(seq)
		rec := b.NewRecordBatch()
		defer rec.Release()
		d, err := recordid.New(ns, "client", "seq")
		if err != nil {
			return err
		}
		withID, err := d.Append(rec, "id")
		if err != nil {
			return err
		}
		defer withID.Release()
		return in.Write(ctx, withID) // returns once committed
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for seq := range int64(5) {
				for range 2 { // every request sent twice, as a client retry
					if err := handle(fmt.Sprintf("c%d", c), seq); err != nil {
						panic(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := in.Close(ctx); err != nil {
		panic(err)
	}
	st := in.Stats()
	fmt.Println("rows:", st.Appended, "duplicates dropped:", st.Duplicates)
	// Output: rows: 20 duplicates dropped: 20
}
