package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// referenceRow is row i of rec encoded value by value by the encoders,
// the definition the column-wise layout must reproduce byte for byte.
func referenceRow(rec arrow.RecordBatch, i int) []byte {
	var dst []byte
	for _, col := range rec.Columns() {
		dst = newEncoder(col)(dst, i)
	}
	return dst
}

// TestLayoutMatchesEncoders: the column-wise layout of every flat type
// with a fast path (and of the types without one) equals the per-value
// encoding, with nulls, in whole arrays and in slices of them.
func TestLayoutMatchesEncoders(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		rows string
	}{
		{arrow.PrimitiveTypes.Int64, `[1, null, -9223372036854775808, 9223372036854775807, 0]`},
		{arrow.PrimitiveTypes.Int32, `[1, null, -2147483648, 7, 0]`},
		{arrow.PrimitiveTypes.Int16, `[1, null, -32768, 7, 0]`},
		{arrow.PrimitiveTypes.Uint8, `[1, null, 255, 7, 0]`},
		{arrow.PrimitiveTypes.Float64, `[1.5, null, -0.0, "NaN", "Inf"]`},
		{arrow.PrimitiveTypes.Float32, `[1.5, null, -0.0, 2, 3]`},
		{arrow.FixedWidthTypes.Date32, `[19000, null, 0, -1, 1]`},
		{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, `["2026-07-14T00:00:00.000001Z", null, "1970-01-01T00:00:00Z", "2026-07-14T00:00:00Z", "2000-01-01T00:00:00Z"]`},
		{&arrow.Decimal128Type{Precision: 20, Scale: 2}, `["1.00", null, "-99.99", "0.01", "123456789012345678.00"]`},
		{&arrow.FixedSizeBinaryType{ByteWidth: 3}, `["AAEC", null, "AAAA", "////", "AQID"]`},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false, true, false]`},
		{arrow.BinaryTypes.String, `["a", null, "", "caf\u00e9", "` + string(bytes.Repeat([]byte("x"), 200)) + `"]`},
		{arrow.BinaryTypes.LargeString, `["a", null, "", "bb", "ccc"]`},
		{arrow.BinaryTypes.Binary, `["YWE=", null, "", "YmJi", "Y2NjYw=="]`},
		{arrow.BinaryTypes.LargeBinary, `["YWE=", null, "", "YmJi", "Y2NjYw=="]`},
		{arrow.BinaryTypes.StringView, `["a", null, "", "a string longer than twelve bytes", "e"]`},
		{arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, 2], null, [], [null], [3]]`},
		{arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), `[{"x": "a"}, null, {"x": null}, {"x": ""}, {"x": "b"}]`},
		{arrow.Null, `[null, null, null, null, null]`},
	}
	for _, tc := range cases {
		t.Run(tc.dt.String(), func(t *testing.T) {
			whole := fromJSON(t, tc.dt, tc.rows)
			defer whole.Release()
			for _, r := range [][2]int64{{0, 5}, {1, 4}, {2, 5}, {3, 3}} {
				rec := whole.NewSlice(r[0], r[1])
				var l layout
				l.build(rec)
				for i := range int(rec.NumRows()) {
					if got, want := l.row(i), referenceRow(rec, i); !bytes.Equal(got, want) {
						t.Errorf("rows %d-%d, row %d: layout %x, encoder %x", r[0], r[1], i, got, want)
					}
				}
				end := 0
				for i := range int(rec.NumRows()) {
					end += paddedLen(len(referenceRow(rec, i)))
				}
				if got := len(l.buf); got != end {
					t.Errorf("rows %d-%d: %d bytes laid out, padded rows hold %d", r[0], r[1], got, end)
				}
				rec.Release()
			}
		})
	}
}

// TestLayoutOfManyColumns: rows of several columns of different widths
// are laid out in column order, each row exactly its values' bytes.
func TestLayoutOfManyColumns(t *testing.T) {
	rec := batch([]int64{1, 2, 3}, []string{"a", "", "ccc"}, []bool{true, false, true})
	defer rec.Release()
	var l layout
	l.build(rec)
	for i := range 3 {
		if got, want := l.row(i), referenceRow(rec, i); !bytes.Equal(got, want) {
			t.Errorf("row %d: layout %x, encoder %x", i, got, want)
		}
	}
}

// TestRowHashesAreSHA256: a row's hash is SHA-256 of its canonical bytes
// in full, for rows whose padding takes one, two and three blocks,
// whichever way the hasher computes it.
func TestRowHashesAreSHA256(t *testing.T) {
	if !paddedDigestWorks {
		t.Error("digests read from crypto/sha256's marshaled state differ from Sum256: every row falls back to Sum256 (correct, slower)")
	}
	var names []string
	for _, n := range []int{0, 1, 40, 44, 45, 46, 47, 53, 54, 55, 100, 108, 109, 110, 200} {
		names = append(names, string(bytes.Repeat([]byte{'a' + byte(n%26)}, n)))
	}
	ids := make([]int64, len(names))
	rec := batch(ids, names, nil)
	defer rec.Release()
	for i, h := range new(Hasher).Hashes(rec, nil) {
		d := sha256.Sum256(referenceRow(rec, i))
		if h != Hash(d) {
			t.Errorf("row %d (%d bytes): hash %x, SHA-256 %x", i, len(referenceRow(rec, i)), h, d)
		}
	}
}

// TestHasherReuse: a Hasher that hashed other batches before (longer
// rows, other columns) gives every batch the hashes a fresh one gives.
func TestHasherReuse(t *testing.T) {
	long := batch([]int64{1, 2}, []string{string(bytes.Repeat([]byte("x"), 150)), "y"}, nil)
	defer long.Release()
	list := fromJSON(t, arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, 2, 3], null]`)
	defer list.Release()
	short := batch([]int64{3, 4, 5}, []string{"", "a", "bc"}, []bool{true, false, true})
	defer short.Release()
	var reused Hasher
	var buf []Hash
	for _, rec := range []arrow.RecordBatch{long, list, short, long} {
		buf = reused.Hashes(rec, buf)
		want := new(Hasher).Hashes(rec, nil)
		if !slices.Equal(buf, want) {
			t.Errorf("%s: reused hasher %x, fresh %x", rec.Schema(), buf, want)
		}
	}
}
