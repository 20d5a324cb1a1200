package fingerprint

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestColumnStreamsTellRowsApart: rows that the column streams could
// confuse if a stream lost a boundary (where nulls are, where one string
// ends and the next begins, which column a value is in) have different
// fingerprints.
func TestColumnStreamsTellRowsApart(t *testing.T) {
	str, i64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64
	cases := []struct {
		name string
		dt   arrow.DataType
		a, b string
	}{
		{"null moved", str, `[null, "a"]`, `["a", null]`},
		{"null moved among values", i64, `[1, null, 2, 3]`, `[1, 2, null, 3]`},
		{"second null moved", i64, `[null, 1, null, 2]`, `[null, 1, 2, null]`},
		{"null versus empty", str, `["", null]`, `[null, ""]`},
		{"string split", str, `["ab", "c"]`, `["a", "bc"]`},
		{"string split at a null", str, `["ab", null, "c"]`, `["a", null, "bc"]`},
		{"fixed-width null versus zero", i64, `[0, 1]`, `[null, 1]`},
		{"binary split", arrow.BinaryTypes.Binary, `["YWI=", "Yw=="]`, `["YQ==", "YmM="]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if a, b := sum(fromJSON(t, tc.dt, tc.a)), sum(fromJSON(t, tc.dt, tc.b)); a == b {
				t.Errorf("%s and %s have one fingerprint %s", tc.a, tc.b, a)
			}
		})
	}
	// A value that moves from one column to the next.
	two := func(a, b string) arrow.RecordBatch {
		sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: str, Nullable: true}, {Name: "b", Type: str, Nullable: true}}, nil)
		rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer rb.Release()
		rb.Field(0).(*array.StringBuilder).Append(a)
		rb.Field(1).(*array.StringBuilder).Append(b)
		return rb.NewRecordBatch()
	}
	if a, b := sum(two("ab", "c")), sum(two("a", "bc")); a == b {
		t.Errorf("(ab, c) and (a, bc) have one fingerprint %s", a)
	}
}

// TestSumIsTheSameForEveryRepresentation: the same values, with nulls,
// as the fast paths' arrays (whole and sliced) and as dictionaries,
// run-end encoded arrays and views (the per-value path), have one
// fingerprint, whole and cut into batches anywhere.
func TestSumIsTheSameForEveryRepresentation(t *testing.T) {
	mem := memory.DefaultAllocator
	cases := []struct {
		name  string
		plain arrow.DataType
		rows  string
		other []arrow.DataType
	}{
		{"strings", arrow.BinaryTypes.String, `["a", null, "", "bb", "a", null, "caf\u00e9"]`,
			[]arrow.DataType{arrow.BinaryTypes.LargeString, arrow.BinaryTypes.StringView,
				&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}}},
		{"integers", arrow.PrimitiveTypes.Int64, `[1, null, -3, 1, null, null, 7]`,
			[]arrow.DataType{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int64}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := sum(fromJSON(t, tc.plain, tc.rows))
			for _, dt := range tc.other {
				if got := sum(fromJSON(t, dt, tc.rows)); got != want {
					t.Errorf("%s: %s, %s: %s", tc.plain, want, dt, got)
				}
			}
			// Run-end encoded: the plain values, one run per row.
			vals := fromJSON(t, tc.plain, tc.rows)
			defer vals.Release()
			n := vals.NumRows()
			ends := make([]int32, n)
			for i := range ends {
				ends[i] = int32(i + 1)
			}
			eb := array.NewInt32Builder(mem)
			eb.AppendValues(ends, nil)
			runEnds := eb.NewArray()
			eb.Release()
			ree := array.NewRunEndEncodedArray(runEnds, vals.Column(0), int(n), 0)
			runEnds.Release()
			sc := arrow.NewSchema([]arrow.Field{{Name: "c", Type: ree.DataType(), Nullable: true}}, nil)
			rec := array.NewRecordBatch(sc, []arrow.Array{ree}, n)
			ree.Release()
			if got := sum(rec); got != want {
				t.Errorf("run-end encoded: %s, plain %s", got, want)
			}
			// Cut anywhere: the nulls' positions carry over batches.
			whole := fromJSON(t, tc.plain, tc.rows)
			defer whole.Release()
			for cut := int64(1); cut < n; cut++ {
				if got := sum(whole.NewSlice(0, cut), whole.NewSlice(cut, n)); got != want {
					t.Errorf("cut at %d: %s, whole %s", cut, got, want)
				}
			}
		})
	}
}
