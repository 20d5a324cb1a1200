// Package orderdata generates the order rows the examples and benchmarks
// load: a fact_orders table partitioned by event_date.
package orderdata

import (
	"context"
	"errors"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
)

// Schema is the fact_orders table schema.
var Schema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "customer_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "amount_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 4, Name: "currency", Type: iceberg.PrimitiveTypes.String, Required: false},
	iceberg.NestedField{ID: 5, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	iceberg.NestedField{ID: 6, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
)

// Spec partitions fact_orders by identity(event_date).
var Spec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{6}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}})

// Order is one order event.
type Order struct {
	ID, Customer, Amount int64
	Currency             string
	EventTime            time.Time
}

// Day returns n deterministic orders of the UTC day d, spread over the day;
// the last one is placed at 23:58.
func Day(d time.Time, n int) []Order {
	out := make([]Order, n)
	for i := range out {
		out[i] = At(d, i, n)
	}
	return out
}

// At is order i of the n orders of day d (see [Day]).
func At(d time.Time, i, n int) Order {
	d = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	at := d.Add(time.Duration(i) * (24 * time.Hour / time.Duration(n+1)))
	if i == n-1 {
		at = d.Add(23*time.Hour + 58*time.Minute)
	}
	return Order{ID: d.Unix()/86400*100_000_000 + int64(i), Customer: int64(i % 997), Amount: int64(100 + i%5000), Currency: []string{"EUR", "USD", "GBP"}[i%3], EventTime: at}
}

// Stream returns the n orders of day d as a reader that builds each batch
// when it is asked for: memory stays one batch whatever n is.
func Stream(d time.Time, n, batch int) array.RecordReader {
	return &stream{sc: ArrowSchema(), d: d, n: n, batch: batch, refs: 1}
}

type stream struct {
	sc      *arrow.Schema
	d       time.Time
	n, next int
	batch   int
	cur     arrow.RecordBatch
	refs    int64
	scratch []Order
}

func (s *stream) Retain()                        { s.refs++ }
func (s *stream) Schema() *arrow.Schema          { return s.sc }
func (s *stream) Err() error                     { return nil }
func (s *stream) RecordBatch() arrow.RecordBatch { return s.cur }
func (s *stream) Record() arrow.RecordBatch      { return s.cur }

func (s *stream) Release() {
	if s.refs--; s.refs == 0 && s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

func (s *stream) Next() bool {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	if s.next >= s.n {
		return false
	}
	s.scratch = s.scratch[:0]
	for ; s.next < s.n && len(s.scratch) < s.batch; s.next++ {
		s.scratch = append(s.scratch, At(s.d, s.next, s.n))
	}
	s.cur = Batch(s.sc, s.scratch)
	return true
}

// Reader returns the orders as Arrow batches of at most batch rows, in the
// table's column layout (without field IDs: icerun resolves by name).
func Reader(orders []Order, batch int) array.RecordReader {
	sc := ArrowSchema()
	var recs []arrow.RecordBatch
	for lo := 0; lo < len(orders); lo += batch {
		recs = append(recs, Batch(sc, orders[lo:min(lo+batch, len(orders))]))
	}
	rdr, _ := array.NewRecordReader(sc, recs)
	for _, r := range recs {
		r.Release()
	}
	return rdr
}

// ArrowSchema is the input schema of [Batch].
func ArrowSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "customer_id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "amount_minor", Type: arrow.PrimitiveTypes.Int64},
		{Name: "currency", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "event_date", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
}

// Batch builds one record batch of orders.
func Batch(sc *arrow.Schema, orders []Order) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, o := range orders {
		b.Field(0).(*array.Int64Builder).Append(o.ID)
		b.Field(1).(*array.Int64Builder).Append(o.Customer)
		b.Field(2).(*array.Int64Builder).Append(o.Amount)
		b.Field(3).(*array.StringBuilder).Append(o.Currency)
		b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(o.EventTime.UnixMicro()))
		b.Field(5).(*array.Date32Builder).Append(arrow.Date32FromTime(o.EventTime))
	}
	return b.NewRecordBatch()
}

// CreateTable creates the table ident (and its namespace) with [Schema] and
// [Spec] unless it exists.
func CreateTable(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) error {
	ns := catalog.NamespaceFromIdent(ident)
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return err
	}
	spec := Spec
	_, err := cat.CreateTable(ctx, ident, Schema, catalog.WithPartitionSpec(&spec))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return nil
	}
	return err
}

// FactOrders is the identifier the examples use.
var FactOrders = icetable.Identifier{"shop", "fact_orders"}

// Open opens the embedded SQLite catalog in dir and creates [FactOrders]
// there unless it exists: the set-up of every example.
func Open(ctx context.Context, dir string) (catalog.Catalog, icetable.Identifier, error) {
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	if err := CreateTable(ctx, cat, FactOrders); err != nil {
		return nil, nil, err
	}
	return cat, FactOrders, nil
}
