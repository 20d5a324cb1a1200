package decode

import (
	"slices"
	"testing"
)

// FuzzDebeziumDecode: no value makes the decoder panic or fail, and every
// value is exactly one of a row (with its change), a reject or a skipped
// tombstone, in order; each change is an upsert or a delete with the two
// ordering values.
func FuzzDebeziumDecode(f *testing.F) {
	sc := dbzSchema(f)
	dec, err := DebeziumFormat()(sc, false)
	if err != nil {
		f.Fatal(err)
	}
	// The bare payloads captured (600 bytes each), and one envelope with
	// its schema part (3.4 KB): seeded with every envelope, the fuzzer
	// stalled for minutes minimizing the new inputs it found in them.
	for _, v := range dbzCaptured(f, "payload") {
		f.Add(v, []byte(dbzEvent("d", dbzKeyRow, "null", dbzSrc)))
	}
	f.Add(dbzCaptured(f, "schema")[0], []byte(nil))
	for _, seed := range []string{
		dbzEvent("t", "null", "null", dbzSrc), `{"schema":null,"payload":null}`, `{"payload":{"op":"c"}}`,
		dbzEvent("u", dbzRow, `{"order_id":1e400}`, dbzSrc), `{"op":"c","source":{"lsn":1,"ts_ms":2},"after":{"order_id":"x"}}`,
		`[`, `null`, ``,
	} {
		f.Add([]byte(seed), []byte(dbzEvent("c", "null", dbzRow, dbzSrc)))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		values := [][]byte{a, b, nil, a}
		d, err := dec(values)
		if err != nil {
			t.Fatalf("decoder error %v", err)
		}
		defer d.Rows.Release()
		rows := int(d.Rows.NumRows())
		if rows+len(d.Bad)+len(d.Skipped) != len(values) || len(d.Changes) != rows {
			t.Fatalf("%d rows, %d changes, %d rejected, %d skipped for %d values", rows, len(d.Changes), len(d.Bad), len(d.Skipped), len(values))
		}
		seen := map[int]bool{}
		for _, r := range d.Bad {
			seen[r.Index] = true
		}
		for _, i := range d.Skipped {
			if seen[i] {
				t.Fatalf("value %d both rejected and skipped", i)
			}
		}
		if !slices.IsSortedFunc(d.Bad, func(x, y Rejected) int { return x.Index - y.Index }) || !slices.IsSorted(d.Skipped) {
			t.Fatalf("indexes out of order: bad %+v, skipped %v", d.Bad, d.Skipped)
		}
		if !slices.Contains(d.Skipped, 2) {
			t.Fatalf("the nil value is not skipped: %v", d.Skipped)
		}
		for _, c := range d.Changes {
			if (c.Op != Upsert && c.Op != Delete) || len(c.Order) != 2 {
				t.Fatalf("change %v %v", c.Op, c.Order)
			}
		}
		for c := 0; c < int(d.Rows.NumCols()); c++ {
			if d.Rows.Column(c).Len() != rows {
				t.Fatalf("column %d: %d values for %d rows", c, d.Rows.Column(c).Len(), rows)
			}
		}
	})
}
