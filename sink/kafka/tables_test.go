package kafka

import (
	"log/slog"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// valuesTable creates db.<name> with a column of each kind of value a
// table can refuse: a required id, amount decimal(9, 2), a required
// timestamp ts, n int, a struct who with a required name and a list of
// required tags, a date day and a boolean ok; partitioned by day(ts),
// truncate[1000](amount) and month(day).
func valuesTable(t testing.TB, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 3, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 5, Name: "who", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 6, Name: "name", Type: iceberg.PrimitiveTypes.String, Required: true},
			{ID: 7, Name: "tags", Type: &iceberg.ListType{ElementID: 8, Element: iceberg.PrimitiveTypes.String, ElementRequired: true}},
		}}},
		iceberg.NestedField{ID: 9, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 10, Name: "ok", Type: iceberg.PrimitiveTypes.Bool},
	)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "ts_day", Transform: iceberg.DayTransform{}},
		iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1001, Name: "amount_t", Transform: iceberg.TruncateTransform{Width: 1000}},
		iceberg.PartitionField{SourceIDs: []int{9}, FieldID: 1002, Name: "day_m", Transform: iceberg.MonthTransform{}},
	)
	return catalogtest.CreateTable(t, cat, name, sch, spec, nil)
}

// openConsumer opens a sink of ident with opts and a consumer of topic
// whose messages are JSON objects of the table's rows.
func openConsumer(t testing.TB, cat catalog.Catalog, ident icetable.Identifier, topic string, opts ...sink.Option) *consumer {
	t.Helper()
	s, err := sink.Open(t.Context(), cat, ident, opts...)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := icetable.SchemaToArrowSchema(s.Table().Schema(), nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return &consumer{s: s, cfg: Config{Topic: topic, Decode: decode.JSON(sc)}, sel: selection{names: []string{topic}}, log: slog.New(slog.DiscardHandler)}
}
