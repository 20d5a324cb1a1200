package kafka

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// Records that decode but hold a row the table cannot hold (a decimal
// beyond its precision, a null in a required nested field, an event time
// no day partition can hold) go to the dead-letter table like records that
// do not decode, and the stream goes on: before, the whole poll failed
// with an untyped error, on every restart (a poison pill).
func TestConsumerRoutesRowsTheTableRefuses(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "who", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: true},
		}}},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}})
	ident := catalogtest.CreateTable(t, cat, "orders", sch, spec, nil)
	dead := icetable.Identifier{"db", "orders_dead"}
	recs := []*kgo.Record{
		{Offset: 20, Value: []byte(`{"id": "a", "amount": 1.25, "ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 21, Value: []byte(`{"id": "b", "amount": 12345678901.23, "ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 22, Value: []byte(`{"id": "c", "ts": "2026-07-14T12:00:00Z", "who": {"name": "x"}}`)},
		{Offset: 23, Value: []byte(`{"id": "d", "ts": "2026-07-14T12:00:00Z", "who": {}}`)},
		{Offset: 24, Value: []byte(`{"id": "e", "ts": 9000000000000000000}`)},
		{Offset: 25, Value: []byte(`{"id": "f", "amount": -9999999.99, "ts": "2026-07-14T13:00:00Z"}`)},
	}
	open := func(opts ...sink.Option) *consumer {
		s, err := sink.Open(ctx, cat, ident, opts...)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
		if err != nil {
			t.Fatal(err)
		}
		return &consumer{s: s, cfg: Config{Topic: "orders", Decode: JSON(sc)}}
	}

	// Without a dead-letter table: a BadMessageError at the first such
	// record, the rows before it committed.
	c := open()
	err := c.write(ctx, 0, recs)
	var bad *sink.BadMessageError
	if !errors.As(err, &bad) || bad.Offset != 21 {
		t.Fatalf("write without dead letter = %v, want a BadMessageError at offset 21", err)
	}
	if err := c.s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("table ids = %v, want [a]", got)
	}

	// With one, twice the same poll: the second is all redelivery.
	for range 2 {
		c = open(sink.WithDeadLetter(dead))
		if _, err := c.s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.write(ctx, 0, recs); err != nil {
			t.Fatal(err)
		}
		if err := c.s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, []string{"a", "c", "f"}) {
		t.Errorf("table ids = %v, want [a c f]", got)
	}
	dl, err := cat.LoadTable(ctx, dead)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := column(t, dl, sink.LateOffset), []string{"21", "23", "24"}; !slices.Equal(got, w) {
		t.Errorf("dead-letter offsets = %v, want %v", got, w)
	}
	reasons := column(t, dl, sink.DeadLetterReason)
	for _, want := range []string{"precision 9", `column "who.name" is null`, "no partition key can hold its value"} {
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("dead-letter reasons = %q, want one with %q", reasons, want)
		}
	}
}
