package kafka

import (
	"encoding/binary"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/sink/decode"
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
	w := avro.MustParse(dbzEnvelope)
	event := func(op, id, status string, lsn int64) string { return dbzAvro(t, w, op, id, status, lsn) }
	consumeDebeziumUpsert(t, decode.DebeziumAvroConfluent(map[int32]avro.Schema{1: w}), event, true)
}
