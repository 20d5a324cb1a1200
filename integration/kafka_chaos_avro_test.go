//go:build integration

package integration

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
)

// chaosAvroSchema is the writer schema (id 1) of the chaos messages with
// ICERUN_KAFKA_FORMAT=avro.
const chaosAvroSchema = `{"type":"record","name":"Event","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}}]}`

var chaosAvro = avro.MustParse(chaosAvroSchema)

// message is the record value of message seq: chaosMessage's JSON, or the
// same fields as a Confluent-framed Avro datum.
func (c chaosConfig) message(seq int) (id, value string) {
	if c.avro == "" {
		return chaosMessage(seq, c.spacing)
	}
	id = fmt.Sprintf("m%d", seq)
	return id, string(confluentAvro(1, chaosAvroDatum(id, seq, chaosEventTime(seq, c.spacing))))
}

func chaosAvroDatum(id string, seq int, at int64) []byte {
	b, err := avro.Marshal(chaosAvro, map[string]any{"id": id, "seq": int64(seq), "event_time": time.UnixMicro(at).UTC()})
	if err != nil {
		panic(err)
	}
	return b
}

func confluentAvro(id uint32, datum []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], id)
	return append(out, datum...)
}

// bad is the n-th record that is not a row of the table: chaosBad's, or
// in Avro a schema id the sinks do not know, a truncated datum, a record
// without the Confluent framing.
func (c chaosConfig) bad(n int) string {
	if c.avro == "" {
		return chaosBad(n)
	}
	id := fmt.Sprintf("b%d", n)
	switch n % 3 {
	case 0:
		return string(confluentAvro(9, chaosAvroDatum(id, n, 0)))
	case 1:
		d := chaosAvroDatum(id, n, 1<<40)
		return string(confluentAvro(1, d[:len(d)-1]))
	}
	return id
}
