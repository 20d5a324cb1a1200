package kafka

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
	"github.com/icerun/icerun/table"
)

// dbz is a Debezium envelope without the schema part: op of the row
// {"id": id, "status": status} at lsn.
func dbz(op, id, status string, lsn int64) string {
	img := fmt.Sprintf(`{"id": %q, "status": %q}`, id, status)
	before, after := "null", img
	if op == "d" {
		before, after = img, "null"
	}
	return fmt.Sprintf(`{"op": %q, "before": %s, "after": %s, "source": {"lsn": %d, "ts_ms": 1}}`, op, before, after, lsn)
}

// Debezium's changes reach an upsert sink through the table's _cdc_op
// and _cdc_lsn columns (a delete by _cdc_op = 'd'), and its tombstones
// move the position without a row: a stream that ends with one is
// covered to its last offset, so nothing is redelivered.
func TestConsumerDebeziumUpsert(t *testing.T) {
	consumeDebeziumUpsert(t, decode.DebeziumFormat(), dbz, false)
}

// consumeDebeziumUpsert runs the upsert stream of TestConsumerDebeziumUpsert,
// its events made by event and decoded by format, through an upsert sink
// and checks the table and its position. With nullValues the tombstones
// are Kafka's null values, else empty ones.
func consumeDebeziumUpsert(t *testing.T, format decode.Format, event func(op, id, status string, lsn int64) string, nullValues bool) {
	t.Helper()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: decode.DebeziumOpColumn, Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: decode.DebeziumLSNColumn, Type: iceberg.PrimitiveTypes.Int64},
	)
	ident := catalogtest.CreateTable(t, cat, "orders", sch, *iceberg.UnpartitionedSpec, nil)
	spec := table.ChangeSpec{Key: []string{"id"}, Order: []string{decode.DebeziumLSNColumn},
		Delete: table.DeleteWhen{Column: decode.DebeziumOpColumn, Value: decode.DebeziumDelete}}
	c := openConsumer(t, cat, ident, "orders", sink.WithUpsert(spec))
	c.cfg.Decode, c.cfg.Format = nil, format
	if _, err := c.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	recs := records(
		event("c", "a", "created", 10), event("c", "b", "created", 11), event("u", "a", "paid", 20),
		event("d", "b", "created", 30), "", // the delete's tombstone
		event("u", "a", "created", 15), // older than the stored row: no change
		event("c", "c", "created", 40), event("d", "c", "created", 41), "",
	)
	if nullValues {
		recs[4].Value, recs[8].Value = nil, nil
	}
	if err := c.writeSkipping(ctx, "orders", 0, recs); err != nil {
		t.Fatal(err)
	}
	if err := c.finish(ctx); err != nil {
		t.Fatal(err)
	}
	if got := column(t, c.s.Table(), "id"); !slices.Equal(got, []string{"a"}) {
		t.Errorf("table ids = %v, want [a]", got)
	}
	if got := column(t, c.s.Table(), "status"); !slices.Equal(got, []string{"paid"}) {
		t.Errorf("table status = %v, want [paid]", got)
	}
	if st := c.s.Stats(); st.Passed != 2 || st.DeadLetters != 0 {
		t.Errorf("passed %d, dead letters %d; want 2, 0", st.Passed, st.DeadLetters)
	}
	pos, err := sink.Positions(c.s.Table())
	if err != nil || pos[sink.SourcePartition{Source: "kafka:orders"}] != int64(len(recs)-1) {
		t.Errorf("positions = %v, %v; want kafka:orders/0 at %d (the last tombstone)", pos, err, len(recs)-1)
	}
}
