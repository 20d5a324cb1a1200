package kafka

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// column reads one string or long column of a table, sorted.
func column(t *testing.T, tbl *icetable.Table, name string) []string {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields(name)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := r.Column(0)
		for i := 0; i < col.Len(); i++ {
			out = append(out, col.ValueStr(i))
		}
		r.Release()
	}
	slices.Sort(out)
	return out
}

// The consumer hands the decoded rows and the rejected records to the
// sink in offset order: the rows land in the table, the rejected records
// in the dead-letter table, once even when the poll is delivered again.
func TestConsumerRoutesRejectedRecords(t *testing.T) {
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
	)
	ident := catalogtest.CreateTable(t, cat, "orders", sch, *iceberg.UnpartitionedSpec, nil)
	dead := icetable.Identifier{"db", "orders_dead"}
	recs := []*kgo.Record{
		{Offset: 10, Value: []byte(`{"id": "a", "ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 11, Value: []byte(`{"id": "b", "ts": "noon"}`)},
		{Offset: 12, Value: []byte(`{"id": "c"}`)},
		{Offset: 13, Value: []byte(`{"id": "d"}`)},
		{Offset: 14, Value: []byte(`{"ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 15, Value: []byte(`{oops`)},
	}
	dl := checkRouting(t, cat, ident, dead, recs, 11, []string{"a"}, []string{"a", "c", "d"}, []string{"11", "14", "15"})
	if got := column(t, dl, sink.DeadLetterRaw); len(got) != 3 || !slices.Contains(got, "e29vcHM=") { // base64 of {oops
		t.Errorf("dead-letter raw = %q", got)
	}
}

// checkRouting delivers the poll recs for ident through a consumer: first
// without a dead-letter table, which must stop with a BadMessageError at
// offset firstBad (naming kafka:orders/0) after committing the rows
// idsBefore; then twice with the dead-letter table dead, after which the
// table holds the rows ids and dead the records at deadOffsets, once. It
// returns the dead-letter table.
func checkRouting(t *testing.T, cat catalog.Catalog, ident, dead icetable.Identifier, recs []*kgo.Record, firstBad int64, idsBefore, ids, deadOffsets []string) *icetable.Table {
	t.Helper()
	ctx := context.Background()
	c := openConsumer(t, cat, ident, "orders")
	err := c.write(ctx, c.cfg.Topic, 0, recs)
	var bad *sink.BadMessageError
	if !errors.As(err, &bad) || bad.Offset != firstBad || bad.Source != (sink.SourcePartition{Source: "kafka:orders", Partition: 0}) {
		t.Fatalf("write without dead letter = %v, want a BadMessageError at kafka:orders/0 offset %d", err, firstBad)
	}
	if err := c.s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, idsBefore) {
		t.Errorf("table ids = %v, want %v", got, idsBefore)
	}
	for range 2 { // the second delivery is all redelivery
		c = openConsumer(t, cat, ident, "orders", sink.WithDeadLetter(dead))
		if _, err := c.s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.write(ctx, c.cfg.Topic, 0, recs); err != nil {
			t.Fatal(err)
		}
		if err := c.s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, ids) {
		t.Errorf("table ids = %v, want %v", got, ids)
	}
	dl, err := cat.LoadTable(ctx, dead)
	if err != nil {
		t.Fatal(err)
	}
	if got := column(t, dl, sink.LateOffset); !slices.Equal(got, deadOffsets) {
		t.Errorf("dead-letter offsets = %v, want %v", got, deadOffsets)
	}
	return dl
}

// A tombstone (a record without a value) is a message the decoder
// rejects, not a row: it goes to the dead letters with no raw bytes, and
// the records around it are rows.
func TestConsumerRoutesTombstones(t *testing.T) {
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true})
	ident := catalogtest.CreateTable(t, cat, "orders", sch, *iceberg.UnpartitionedSpec, nil)
	dead := icetable.Identifier{"db", "orders_dead"}
	recs := []*kgo.Record{
		{Offset: 30, Value: []byte(`{"id": "a"}`)},
		{Offset: 31, Key: []byte("k"), Value: nil},
		{Offset: 32, Value: []byte(`{"id": "b"}`)},
	}
	dl := checkRouting(t, cat, ident, dead, recs, 31, []string{"a"}, []string{"a", "b"}, []string{"31"})
	if got := column(t, dl, sink.DeadLetterReason); len(got) != 1 || !strings.Contains(got[0], "not a JSON object") {
		t.Errorf("dead-letter reason = %q, want not a JSON object", got)
	}
	if got := column(t, dl, sink.DeadLetterRaw); len(got) != 1 || got[0] != "(null)" {
		t.Errorf("dead-letter raw = %q, want (null)", got)
	}
}
