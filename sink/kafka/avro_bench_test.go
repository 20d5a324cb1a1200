package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
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
	jsonRecs := make([]*kgo.Record, 10_000)
	bare := make([]*kgo.Record, len(jsonRecs))
	framed := make([]*kgo.Record, len(jsonRecs))
	for i := range jsonRecs {
		ts := at.Add(time.Duration(i) * time.Second)
		jsonRecs[i] = &kgo.Record{Value: []byte(fmt.Sprintf(`{"id":"m%d","ts":%d,"day":"2026-07-14"}`, i, ts.UnixMicro())), Offset: int64(i)}
		datum := mustAvro(b, w, map[string]any{"id": fmt.Sprintf("m%d", i), "ts": ts, "day": day})
		bare[i] = &kgo.Record{Value: datum, Offset: int64(i)}
		framed[i] = &kgo.Record{Value: confluent(1, datum), Offset: int64(i)}
	}
	run := func(name string, f Format, recs []*kgo.Record) {
		b.Run(name, func(b *testing.B) {
			dec, err := f(sc, false)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				d, err := dec(recs)
				if err != nil || len(d.Bad) > 0 || d.Rows.NumRows() != int64(len(recs)) {
					b.Fatal(err, d.Bad)
				}
				d.Rows.Release()
			}
		})
	}
	run("json-integers", JSONFormat(), jsonRecs)
	b.Run("json-integers-evolve", func(b *testing.B) { // every message checked for new fields
		dec, _ := JSONFormat()(sc, true)
		for range b.N {
			d, err := dec(jsonRecs)
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
			for _, r := range bare {
				var m map[string]any
				if err := avro.Unmarshal(w, r.Value, &m); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
