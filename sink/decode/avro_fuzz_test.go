package decode

import (
	"testing"

	"github.com/hamba/avro/v2"
)

// FuzzAvroDecode: no datum makes the Avro decoder panic or fail (every
// record is a row or a reject), and every batch is well formed, also when
// a bad datum sits between good ones (the builders rebuilt).
func FuzzAvroDecode(f *testing.F) {
	w := avro.MustParse(avroWriter)
	sc := avroTable(f)
	dec, err := Avro(w)(sc, true)
	if err != nil {
		f.Fatal(err)
	}
	good := mustAvro(f, w, avroOrder("o1", int64(5)))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(mustAvro(f, w, avroOrder(nil, "x")))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, v []byte) {
		msgs := [][]byte{good, v, good, v}
		d, err := dec(msgs)
		if err != nil {
			t.Fatalf("decoder error: %v", err)
		}
		defer d.Rows.Release()
		if got, want := int(d.Rows.NumRows()), len(msgs)-len(d.Bad); got != want {
			t.Fatalf("%d rows for %d values and %d rejected", got, len(msgs), len(d.Bad))
		}
		for i, c := range d.Rows.Columns() {
			if c.Len() != int(d.Rows.NumRows()) {
				t.Fatalf("column %s: %d values in %d rows", sc.Field(i).Name, c.Len(), d.Rows.NumRows())
			}
			if err := wellFormed(c); err != "" {
				t.Fatalf("column %s: %s", sc.Field(i).Name, err)
			}
		}
	})
}
