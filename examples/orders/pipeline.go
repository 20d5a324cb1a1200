package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/table"
)

var (
	staging = icetable.Identifier{"shop", "staging_orders"}
	revenue = icetable.Identifier{"shop", "daily_revenue"}

	// stagingKey is the upsert key: an event's identity in the source.
	stagingKey = []string{"order_id", "event_type", "event_ts"}

	// eventNamespace scopes the event ids; it never changes.
	eventNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://icerun.dev/examples/orders/events"))
)

var stagingSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "event_id", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 2, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "event_type", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 4, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	iceberg.NestedField{ID: 5, Name: "amount_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 6, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
)

var revenueSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "event_date", Type: iceberg.PrimitiveTypes.Date, Required: true},
	iceberg.NestedField{ID: 2, Name: "paid_orders", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 3, Name: "revenue_minor", Type: iceberg.PrimitiveTypes.Int64, Required: true},
)

// byDate partitions a table by identity of its event_date column.
func byDate(sourceID int) iceberg.PartitionSpec {
	return iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{sourceID}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}})
}

// createTables creates both tables unless they exist.
func createTables(ctx context.Context, cat catalog.Catalog) error {
	if err := cat.CreateNamespace(ctx, icetable.Identifier{"shop"}, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return err
	}
	for _, t := range []struct {
		ident icetable.Identifier
		sc    *iceberg.Schema
		spec  iceberg.PartitionSpec
	}{{staging, stagingSchema, byDate(6)}, {revenue, revenueSchema, byDate(1)}} {
		if _, err := cat.CreateTable(ctx, t.ident, t.sc, catalog.WithPartitionSpec(&t.spec)); err != nil && !errors.Is(err, catalog.ErrTableAlreadyExists) {
			return err
		}
	}
	return nil
}

// errKilled stands for the process dying between two steps of a run.
var errKilled = errors.New("orders: run killed")

// Pipeline processes one landing of raw events. Kill, when set, is called
// after each step with its name; an error stops the run there, as a crash
// would.
type Pipeline struct {
	Code string   // code version recorded in every snapshot
	Key  []string // upsert key of staging_orders; nil: stagingKey
	Kill func(step string) error
}

// Run takes over events (it releases them). It upserts the landing into staging_orders by the event's source
// identity, then recomputes the revenue of every day the landing touched
// from staging_orders, read at the snapshot the upsert made.
func (p Pipeline) Run(ctx context.Context, cat catalog.Catalog, events array.RecordReader) error {
	ids, err := recordid.New(eventNamespace, stagingKey...)
	if err != nil {
		events.Release()
		return err
	}
	stage, err := table.Open(ctx, cat, staging, table.WithCodeVersion(p.Code))
	if err != nil {
		events.Release()
		return err
	}
	key := p.Key
	if key == nil {
		key = stagingKey
	}
	rows := ids.Reader(events, "event_id") // takes over events
	defer rows.Release()
	res, err := stage.Upsert(ctx, rows, key...)
	if err != nil {
		return err
	}
	if err := p.step("staging upsert"); err != nil {
		return err
	}
	src, err := cat.LoadTable(ctx, staging)
	if err != nil {
		return err
	}
	agg, err := table.Open(ctx, cat, revenue, table.WithCodeVersion(p.Code))
	if err != nil {
		return err
	}
	for _, k := range res.Partitions {
		sk, err := partition.ParseKey(src.Spec(), src.Schema(), k)
		if err != nil {
			return err
		}
		dk, err := agg.Key(k)
		if err != nil {
			return err
		}
		day, err := time.Parse(time.DateOnly, k[len("event_date="):])
		if err != nil {
			return err
		}
		if _, err := agg.Recompute(ctx, dk, table.Source{Table: src, Key: sk, SnapshotID: res.SnapshotID}, dailyRevenue(day)); err != nil {
			return err
		}
		if err := p.step("rollup " + k); err != nil {
			return err
		}
	}
	return nil
}

func (p Pipeline) step(name string) error {
	if p.Kill == nil {
		return nil
	}
	return p.Kill(name)
}

// dailyRevenue aggregates one day of staging_orders: the number of paid
// orders and their revenue. It is computed from every row of the day,
// never added to a previous total.
func dailyRevenue(day time.Time) table.AggregateFunc {
	return func(_ context.Context, src array.RecordReader) (array.RecordReader, error) {
		var orders, sum int64
		for src.Next() {
			rec := src.RecordBatch()
			types := rec.Column(rec.Schema().FieldIndices("event_type")[0]).(*array.String)
			amounts := rec.Column(rec.Schema().FieldIndices("amount_minor")[0]).(*array.Int64)
			for i := 0; i < types.Len(); i++ {
				if types.Value(i) == "paid" {
					orders++
					sum += amounts.Value(i)
				}
			}
		}
		if err := src.Err(); err != nil {
			return nil, err
		}
		sc := arrow.NewSchema([]arrow.Field{
			{Name: "event_date", Type: arrow.FixedWidthTypes.Date32},
			{Name: "paid_orders", Type: arrow.PrimitiveTypes.Int64},
			{Name: "revenue_minor", Type: arrow.PrimitiveTypes.Int64},
		}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
		b.Field(1).(*array.Int64Builder).Append(orders)
		b.Field(2).(*array.Int64Builder).Append(sum)
		rec := b.NewRecordBatch()
		defer rec.Release()
		return array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	}
}

// revenueByDay reads daily_revenue as "date: orders, revenue" lines.
func revenueByDay(ctx context.Context, cat catalog.Catalog) ([]string, error) {
	tbl, err := cat.LoadTable(ctx, revenue)
	if err != nil || tbl.CurrentSnapshot() == nil {
		return nil, err
	}
	_, batches, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for rec, err := range batches {
		if err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			d := rec.Column(0).(*array.Date32).Value(i).ToTime().Format(time.DateOnly)
			out = append(out, fmt.Sprintf("%s: %d paid orders, revenue %d", d, rec.Column(1).(*array.Int64).Value(i), rec.Column(2).(*array.Int64).Value(i)))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out, nil
}
