package decode

import (
	"testing"

	"github.com/hamba/avro/v2"
)

// A nil value (a Kafka tombstone) and an empty one are rejects of every
// format, between rows that decode, never a row, a panic or an error of
// the decoder.
func TestNilValueIsRejected(t *testing.T) {
	w := avro.MustParse(avroWriter)
	datum := mustAvro(t, w, avroOrder("o1", int64(5)))
	cases := []struct {
		name string
		f    Format
		good []byte
	}{
		{"json", JSONFormat(), []byte(`{"id":"o1"}`)},
		{"avro", Avro(w), datum},
		{"avro-confluent", AvroConfluent(map[int32]avro.Schema{1: w}), confluent(1, datum)},
	}
	for _, c := range cases {
		d := avroDecode(t, c.f, avroTable(t), false, c.good, nil, c.good, []byte{}, c.good)
		if len(d.Bad) != 2 || d.Bad[0].Index != 1 || d.Bad[1].Index != 3 || d.Rows.NumRows() != 3 {
			t.Errorf("%s: bad %+v, %d rows; want values 1 and 3 rejected, 3 rows", c.name, d.Bad, d.Rows.NumRows())
		}
	}
}
