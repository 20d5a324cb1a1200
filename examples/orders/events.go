package main

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Event is one raw order event as it lands from upstream.
type Event struct {
	OrderID int64
	Type    string // "created" or "paid"
	At      time.Time
	Amount  int64 // minor units; the revenue of a "paid" event
}

// day1 and day2 are the two event days of the example.
var (
	day1 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	day2 = day1.AddDate(0, 0, 1)
)

// ordersOf returns n orders of day d: each one "created", then "paid" five
// minutes later. Order ids are unique across days.
func ordersOf(d time.Time, n int) []Event {
	var out []Event
	for i := range n {
		id := int64(d.Day())*1000 + int64(i)
		at := d.Add(time.Duration(i)*37*time.Minute + 2*time.Hour)
		amount := int64(1000 + 250*i)
		out = append(out, Event{id, "created", at, 0}, Event{id, "paid", at.Add(5 * time.Minute), amount})
	}
	return out
}

// Landings are what upstream delivered on each processing day.
//
// Landing 1 holds day 1's events, some of them twice (redelivered), except
// the last order's "paid" event: upstream failed to deliver it and retried
// the next day. Landing 2 holds day 2's events, the late "paid" event of
// day 1, and a redelivery of two events of landing 1.
func landings() (first, second []Event, late Event) {
	d1, d2 := ordersOf(day1, 6), ordersOf(day2, 4)
	late = d1[len(d1)-1]
	first = append(append([]Event{}, d1[:len(d1)-1]...), d1[0], d1[3]) // two redeliveries
	second = append(append([]Event{}, d2...), late, d1[1], d1[2])
	return first, second, late
}

// eventSchema is the Arrow schema of a landing.
var eventSchema = arrow.NewSchema([]arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "event_type", Type: arrow.BinaryTypes.String},
	{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	{Name: "amount_minor", Type: arrow.PrimitiveTypes.Int64},
	{Name: "event_date", Type: arrow.FixedWidthTypes.Date32},
}, nil)

// reader returns events as Arrow batches of at most batch rows.
func reader(events []Event, batch int) array.RecordReader {
	var recs []arrow.RecordBatch
	for lo := 0; lo < len(events); lo += batch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, eventSchema)
		for _, e := range events[lo:min(lo+batch, len(events))] {
			b.Field(0).(*array.Int64Builder).Append(e.OrderID)
			b.Field(1).(*array.StringBuilder).Append(e.Type)
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(e.At.UnixMicro()))
			b.Field(3).(*array.Int64Builder).Append(e.Amount)
			b.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(e.At))
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rdr, _ := array.NewRecordReader(eventSchema, recs)
	for _, r := range recs {
		r.Release()
	}
	return rdr
}
