package sink_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
)

// day0 is the event day of the fixture messages.
var day0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// eventsTable creates db.events: id (string, the message key), seq (long),
// event_time (timestamp), partitioned by day(event_time).
func eventsTable(t testing.TB, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	return catalogtest.CreateTable(t, cat, name, sch, spec, nil)
}

// msg is one fixture message.
type msg struct {
	id  string
	seq int64
	at  time.Time
}

// batch is msgs as an Arrow record (input fields by name, no field ids).
func batch(msgs []msg) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, m := range msgs {
		b.Field(0).(*array.StringBuilder).Append(m.id)
		b.Field(1).(*array.Int64Builder).Append(m.seq)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(m.at.UnixMicro()))
	}
	return b.NewRecordBatch()
}

// messages are the messages at offsets [from, to) of a source partition:
// id "p<part>-<offset>", one a second from day0 noon.
func messages(part int32, from, to int64) ([]msg, []int64) {
	var ms []msg
	var offs []int64
	for o := from; o < to; o++ {
		ms = append(ms, msg{id: fmt.Sprintf("p%d-%d", part, o), seq: o, at: day0.Add(12*time.Hour + time.Duration(o)*time.Second)})
		offs = append(offs, o)
	}
	return ms, offs
}

// ids reads the id column of every row of the table, sorted.
func ids(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	var out []string
	for rec, err := range recs {
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		col := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.String)
		for i := 0; i < col.Len(); i++ {
			out = append(out, col.Value(i))
		}
		rec.Release()
	}
	slices.Sort(out)
	return out
}

// want is the sorted ids of the messages at offsets [from, to) of part.
func want(part int32, from, to int64) []string {
	ms, _ := messages(part, from, to)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.id
	}
	slices.Sort(out)
	return out
}
