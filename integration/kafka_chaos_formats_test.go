//go:build integration

package integration

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
)

// chaosAvroSchema is the writer schema (id 1) of the chaos messages with
// ICERUN_KAFKA_FORMAT=avro.
const chaosAvroSchema = `{"type":"record","name":"Event","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}}]}`

// chaosAvroTagged (id 2) adds the field tag, which the messages from
// ICERUN_KAFKA_EVOLVE's midpoint on carry.
const chaosAvroTagged = `{"type":"record","name":"Event","fields":[
 {"name":"id","type":"string"},
 {"name":"seq","type":"long"},
 {"name":"event_time","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"tag","type":["null","string"]}]}`

var chaosAvro, chaosAvroTag = avro.MustParse(chaosAvroSchema), avro.MustParse(chaosAvroTagged)

// chaosTag is the tag of message seq from the midpoint of an evolving
// run on ("" before it: the message has no tag field).
func (c chaosConfig) chaosTag(seq int) string {
	if c.evolveFrom == 0 || seq < c.evolveFrom {
		return ""
	}
	return "t" + strconv.Itoa(seq)
}

// message is the record key and value of message seq: chaosMessage's
// JSON, or the same fields as a Confluent-framed Avro datum, or in upsert
// mode upsertMessage's change.
func (c chaosConfig) message(seq int) (id, value string) {
	if c.upsert { // the record key names the message, the value the change
		return "m" + strconv.Itoa(seq), upsertMessage(seq)
	}
	tag := c.chaosTag(seq)
	if c.avro == "" {
		id, value = chaosMessage(seq, c.spacing)
		if tag != "" {
			value = strings.TrimSuffix(value, "}") + fmt.Sprintf(`,"tag":%q}`, tag)
		}
		return id, value
	}
	id = fmt.Sprintf("m%d", seq)
	if tag != "" {
		b, err := avro.Marshal(chaosAvroTag, map[string]any{"id": id, "seq": int64(seq), "event_time": time.UnixMicro(chaosEventTime(seq, c.spacing)).UTC(), "tag": tag})
		if err != nil {
			panic(err)
		}
		return id, string(confluentAvro(2, b))
	}
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

// checkEvolved reads the tag column the sinks added (-evolve): every row
// of a message from the midpoint on holds its tag, every row before it
// null. It returns the rows that do not.
func checkEvolved(t *testing.T, cc chaosCatalog, ident icetable.Identifier, cfg chaosConfig) int {
	t.Helper()
	ctx := context.Background()
	tbl, err := loadChaosTable(t, cc, ident)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := tbl.Schema().FindFieldByName("tag"); !ok || f.Required || f.Type.String() != "string" {
		t.Fatalf("the table has no optional string column tag: %s", tbl.Schema())
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "tag")).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids, tags := rec.Column(0).(*array.String), rec.Column(1).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			seq, _ := strconv.Atoi(strings.TrimPrefix(ids.Value(i), "m"))
			got := ""
			if tags.IsValid(i) {
				got = tags.Value(i)
				if got == "" {
					got = "(empty)"
				}
			}
			if got != cfg.chaosTag(seq) {
				wrong++
			}
		}
		rec.Release()
	}
	return wrong
}
