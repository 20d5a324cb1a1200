package kafka

import (
	"context"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
	"github.com/icerun/icerun/table"
)

// dbzEnvelope is a Debezium envelope schema, as Confluent's
// AvroConverter writes it, of the rows {"id", "status"}.
const dbzEnvelope = `{"type":"record","name":"Envelope","namespace":"shop.public.orders","fields":[
 {"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"id","type":"string"},{"name":"status","type":["null","string"],"default":null}]}],"default":null},
 {"name":"after","type":["null","Value"],"default":null},
 {"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
  {"name":"version","type":"string"},{"name":"ts_ms","type":"long"},{"name":"lsn","type":["null","long"],"default":null}]}},
 {"name":"transaction","type":["null",{"type":"record","name":"block","namespace":"event","fields":[{"name":"id","type":"string"}]}],"default":null},
 {"name":"op","type":"string"},
 {"name":"ts_ms","type":["null","long"],"default":null}]}`

// dbzAvro is the Confluent-framed (schema id 1) Avro event of op of the
// row {"id": id, "status": status} at lsn.
func dbzAvro(t *testing.T, w avro.Schema, op, id, status string, lsn int64) string {
	t.Helper()
	img := map[string]any{"shop.public.orders.Value": map[string]any{"id": id, "status": map[string]any{"string": status}}}
	var before, after any = nil, img
	if op == "d" {
		before, after = img, nil
	}
	datum, err := avro.Marshal(w, map[string]any{
		"before": before, "after": after, "op": op, "transaction": nil, "ts_ms": nil,
		"source": map[string]any{"version": "3.6.1.Final", "ts_ms": int64(1), "lsn": map[string]any{"long": lsn}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(binary.BigEndian.AppendUint32([]byte{0}, 1)) + string(datum)
}

// Debezium's changes in Avro reach an upsert sink as its JSON changes
// do (TestConsumerDebeziumUpsert): the same stream, the same table.
func TestConsumerDebeziumAvroUpsert(t *testing.T) {
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
	w := avro.MustParse(dbzEnvelope)
	c := openConsumer(t, cat, ident, "orders", sink.WithUpsert(spec))
	c.cfg.Decode, c.cfg.Format = nil, decode.DebeziumAvroConfluent(map[int32]avro.Schema{1: w})
	if _, err := c.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	recs := records(
		dbzAvro(t, w, "c", "a", "created", 10), dbzAvro(t, w, "c", "b", "created", 11), dbzAvro(t, w, "u", "a", "paid", 20),
		dbzAvro(t, w, "d", "b", "created", 30), "", // the delete's tombstone
		dbzAvro(t, w, "u", "a", "created", 15), // older than the stored row: no change
		dbzAvro(t, w, "c", "c", "created", 40), dbzAvro(t, w, "d", "c", "created", 41), "",
	)
	recs[4].Value, recs[8].Value = nil, nil // Kafka's null values
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
