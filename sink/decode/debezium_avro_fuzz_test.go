package decode

import (
	"math/big"
	"slices"
	"testing"
)

// FuzzDebeziumAvroDecode: no message makes the decoder panic or fail,
// and every message is exactly one of a row (with its change), a reject
// or a skipped tombstone, in order, with well-formed columns, also when
// a bad message sits between good ones.
func FuzzDebeziumAvroDecode(f *testing.F) {
	sc := dbzSchema(f)
	dec, err := DebeziumAvroConfluent(dbzAvroSchemas(f))(sc, true)
	if err != nil {
		f.Fatal(err)
	}
	img := dbzImage(9, "z", "created", big.NewRat(5, 2), 20650, "2026-07-16T00:00:00Z")
	img["coupon"] = map[string]any{"string": "SUMMER"}
	good := dbzAvroEvent(f, 1, "c", nil, dbzAvroRow, int64(100))
	for _, seed := range [][]byte{
		good,
		dbzAvroEvent(f, 1, "u", dbzAvroRow, dbzAvroRow, int64(101)),
		dbzAvroEvent(f, 1, "d", dbzAvroKeyRow, nil, int64(102)),
		dbzAvroEvent(f, 1, "c", nil, dbzAvroRow, nil),
		dbzAvroEvent(f, 1, "t", nil, nil, int64(1)),
		dbzAvroEvent(f, 2, "r", nil, img, int64(3)),
		good[:len(good)/2], confluent(7, good[5:]), {}, {0},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		values := [][]byte{good, v, nil, v}
		d, err := dec(values)
		if err != nil {
			t.Fatalf("decoder error %v", err)
		}
		defer d.Rows.Release()
		rows := int(d.Rows.NumRows())
		if rows+len(d.Bad)+len(d.Skipped) != len(values) || len(d.Changes) != rows {
			t.Fatalf("%d rows, %d changes, %d rejected, %d skipped for %d values", rows, len(d.Changes), len(d.Bad), len(d.Skipped), len(values))
		}
		if !slices.IsSortedFunc(d.Bad, func(x, y Rejected) int { return x.Index - y.Index }) || !slices.IsSorted(d.Skipped) || !slices.Contains(d.Skipped, 2) {
			t.Fatalf("bad %+v, skipped %v", d.Bad, d.Skipped)
		}
		for _, c := range d.Changes {
			if (c.Op != Upsert && c.Op != Delete) || len(c.Order) != 2 {
				t.Fatalf("change %v %v", c.Op, c.Order)
			}
		}
		for i, c := range d.Rows.Columns() {
			if c.Len() != rows {
				t.Fatalf("column %s: %d values in %d rows", sc.Field(i).Name, c.Len(), rows)
			}
			if err := wellFormed(c); err != "" {
				t.Fatalf("column %s: %s", sc.Field(i).Name, err)
			}
		}
	})
}
