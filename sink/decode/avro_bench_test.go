package decode

import (
	"fmt"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// BenchmarkAvroDecode decodes the poll of BenchmarkJSONDecode (10,000
// messages of ordersSchema's table) as Avro datums, bare and in the
// Confluent wire format, beside JSON with integer event times (with and
// without the check for new fields of evolution) and hamba/avro's
// generic decoding into maps (no Arrow at all), in the same run: report
// the ratios to json-integers.
func BenchmarkAvroDecode(b *testing.B) {
	sc := ordersSchema(&testing.T{})
	w := avro.MustParse(`{"type":"record","name":"Order","fields":[
		{"name":"id","type":"string"},
		{"name":"ts","type":{"type":"long","logicalType":"local-timestamp-micros"}},
		{"name":"day","type":{"type":"int","logicalType":"date"}}]}`)
	at := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	jsonMsgs := make([][]byte, 10_000)
	bare := make([][]byte, len(jsonMsgs))
	framed := make([][]byte, len(jsonMsgs))
	for i := range jsonMsgs {
		ts := at.Add(time.Duration(i) * time.Second)
		jsonMsgs[i] = []byte(fmt.Sprintf(`{"id":"m%d","ts":%d,"day":"2026-07-14"}`, i, ts.UnixMicro()))
		datum := mustAvro(b, w, map[string]any{"id": fmt.Sprintf("m%d", i), "ts": ts, "day": day})
		bare[i] = datum
		framed[i] = confluent(1, datum)
	}
	run := func(name string, f Format, msgs [][]byte) {
		b.Run(name, func(b *testing.B) {
			dec, err := f(sc, false)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				d, err := dec(msgs)
				if err != nil || len(d.Bad) > 0 || d.Rows.NumRows() != int64(len(msgs)) {
					b.Fatal(err, d.Bad)
				}
				d.Rows.Release()
			}
		})
	}
	run("json-integers", JSONFormat(), jsonMsgs)
	b.Run("json-integers-evolve", func(b *testing.B) { // every message checked for new fields
		dec, _ := JSONFormat()(sc, true)
		for range b.N {
			d, err := dec(jsonMsgs)
			if err != nil || len(d.Bad) > 0 || len(d.NewColumns) > 0 {
				b.Fatal(err, d.Bad, d.NewColumns)
			}
			d.Rows.Release()
		}
	})
	run("avro-bare", Avro(w), bare)
	run("avro-confluent", AvroConfluent(map[int32]avro.Schema{1: w}), framed)
	b.Run("hamba-generic-maps", func(b *testing.B) {
		for range b.N {
			for _, v := range bare {
				var m map[string]any
				if err := avro.Unmarshal(w, v, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
