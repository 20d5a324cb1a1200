package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// FuzzJSONIntoTable: whatever a message holds, the Kafka adapter either
// commits it as a row or puts it in the dead-letter table; the commit
// never fails and nothing panics (a message that stops or crashes the sink
// on every restart is a poison pill).
func FuzzJSONIntoTable(f *testing.F) {
	ctx := context.Background()
	cat, _ := catalogtest.New(f)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "who", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 5, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: true},
			{ID: 6, Name: "tags", Type: &iceberg.ListType{ElementID: 7, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}},
		}}},
		iceberg.NestedField{ID: 8, Name: "day", Type: iceberg.PrimitiveTypes.Date},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "amount_t", Transform: iceberg.TruncateTransform{Width: 1000}},
		iceberg.PartitionField{SourceIDs: []int{8}, FieldID: 1002, Name: "day_m", Transform: iceberg.MonthTransform{}},
	)
	ident := catalogtest.CreateTable(f, cat, "fuzz", sch, spec, nil)
	s, err := sink.Open(ctx, cat, ident, sink.WithDeadLetter(icetable.Identifier{"db", "fuzz_dead"}))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.Start(ctx); err != nil {
		f.Fatal(err)
	}
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		f.Fatal(err)
	}
	c := &consumer{s: s, cfg: Config{Topic: "fuzz", Decode: JSON(sc)}}
	for _, seed := range []string{
		`{"id": "a", "amount": 1.25, "ts": "2026-07-14T12:00:00Z", "day": "2026-07-14"}`,
		`{"id": "b", "ts": 1, "who": {"name": "x", "tags": ["a", null]}}`,
		`{"id": "c", "ts": 9000000000000000000, "day": 2000000000}`,
		`{"id": "d", "ts": -9000000000000000000, "amount": -9999999.99}`,
		`{"id": "e", "ts": "0001-01-01T00:00:00Z", "who": {}}`,
	} {
		f.Add([]byte(seed))
	}
	offset := int64(0)
	f.Fuzz(func(t *testing.T, value []byte) {
		offset++
		if err := c.write(ctx, 0, []*kgo.Record{{Offset: offset, Value: value}}); err != nil {
			t.Fatalf("write %q: %v", value, err)
		}
		if _, err := s.Commit(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("commit after %q: %v", value, err)
		}
	})
}
