package fingerprint

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fuzzRow is one row of the fuzzed inputs: a fixed-width value, a
// nullable string and a nullable list (the flat and the per-value paths
// of the layout).
type fuzzRow struct {
	id   int64
	name *string
	tags []int64 // nil: null
}

var fuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64), Nullable: true},
}, nil)

func buildRows(rows []fuzzRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, fuzzSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		if r.name == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r.name)
		}
		lb := b.Field(2).(*array.ListBuilder)
		if r.tags == nil {
			lb.AppendNull()
		} else {
			lb.Append(true)
			lb.ValueBuilder().(*array.Int64Builder).AppendValues(r.tags, nil)
		}
	}
	return b.NewRecordBatch()
}

// rowsOf decodes fuzz data into rows, a partition (0 to 2) per row and
// batch cuts.
func rowsOf(data []byte) (rows []fuzzRow, keys []int, cut []bool) {
	for i := 0; i+1 < len(data); i += 2 {
		v, c := data[i], data[i+1]
		r := fuzzRow{id: int64(v) - 128}
		if c&1 == 0 {
			s := string(data[max(0, i-int(c>>4)):i])
			r.name = &s
		}
		if c&2 == 0 {
			r.tags = make([]int64, c>>6)
			for j := range r.tags {
				r.tags[j] = int64(v) * int64(j)
			}
		}
		rows = append(rows, r)
		keys = append(keys, int(c>>2)%3)
		cut = append(cut, c&16 != 0)
	}
	return rows, keys, cut
}

// FuzzSumIgnoresBatchBoundaries: the fingerprint of rows depends on the
// rows and their order only: the same rows as one batch, as zero-copy
// slices cut anywhere, or as batches built one by one, give one
// fingerprint; and a partition's rows spread over batches that interleave
// them with other partitions' rows (a dynamic replace, Hasher.Add with
// row keys) give the fingerprint of that partition's rows alone.
func FuzzSumIgnoresBatchBoundaries(f *testing.F) {
	f.Add([]byte("the rows of a partition, cut into batches"))
	f.Add([]byte{1, 0, 2, 16, 3, 255, 4, 17, 5, 2, 6, 19, 7, 64})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, keys, cut := rowsOf(data)
		whole := buildRows(rows)
		defer whole.Release()
		var one, sliced, built Sum
		one.Add(whole)
		parts := [3]Sum{}
		var dynamic Hasher
		start := 0
		for i := range rows {
			if !cut[i] && i != len(rows)-1 {
				continue
			}
			s := whole.NewSlice(int64(start), int64(i+1))
			sliced.Add(s)
			dynamic.Add(s, []*Sum{&parts[0], &parts[1], &parts[2]}, keys[start:i+1])
			s.Release()
			b := buildRows(rows[start : i+1])
			built.Add(b)
			b.Release()
			start = i + 1
		}
		if sliced.String() != one.String() || built.String() != one.String() {
			t.Errorf("one batch %s, slices %s, built batches %s: want one fingerprint", one.String(), sliced.String(), built.String())
		}
		for k := range parts {
			var alone []fuzzRow
			for i, r := range rows {
				if keys[i] == k {
					alone = append(alone, r)
				}
			}
			b := buildRows(alone)
			var want Sum
			want.Add(b)
			b.Release()
			if parts[k].String() != want.String() {
				t.Errorf("partition %d: interleaved %s, alone %s", k, parts[k].String(), want.String())
			}
		}
	})
}

// TestSumDescribesTypes: rows whose canonical bytes are equal but whose
// column types differ (an int64 and a timestamp of the same bits) have
// different fingerprints, so no schema change makes an input alias
// another; types that hold the same values alike (string and large
// string, a dictionary and its values) do not change it.
func TestSumDescribesTypes(t *testing.T) {
	ts := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	if a, b := sum(fromJSON(t, arrow.PrimitiveTypes.Int64, `[0]`)), sum(fromJSON(t, ts, `["1970-01-01T00:00:00Z"]`)); a == b {
		t.Errorf("int64 0 and timestamp 0 have one fingerprint %s", a)
	}
	if a, b := sum(fromJSON(t, ts, `[0]`)), sum(fromJSON(t, &arrow.TimestampType{Unit: arrow.Microsecond}, `[0]`)); a == b {
		t.Errorf("timestamptz and timestamp have one fingerprint %s", a)
	}
	if a, b := sum(fromJSON(t, arrow.BinaryTypes.String, `["a"]`)), sum(fromJSON(t, arrow.BinaryTypes.LargeString, `["a"]`)); a != b {
		t.Errorf("string %s and large string %s: want one fingerprint", a, b)
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	if a, b := sum(fromJSON(t, arrow.BinaryTypes.String, `["a", "b", "a"]`)), sum(fromJSON(t, dict, `["a", "b", "a"]`)); a != b {
		t.Errorf("string %s and dictionary %s: want one fingerprint", a, b)
	}
	// Rows of two types in one input: the change of types is in the
	// message, with the rows before it.
	i64 := func(v string) arrow.RecordBatch { return fromJSON(t, arrow.PrimitiveTypes.Int64, v) }
	mixed, same := sum(i64(`[1]`), fromJSON(t, ts, `[2]`)), sum(i64(`[1, 2]`))
	if mixed == same {
		t.Errorf("int64 then timestamp rows have the fingerprint of int64 rows, %s", mixed)
	}
	if a, b := sum(i64(`[1]`), fromJSON(t, ts, `[2, 3]`)), sum(i64(`[1, 2]`), fromJSON(t, ts, `[3]`)); a == b {
		t.Errorf("the change of types at another row leaves the fingerprint %s", a)
	}
}

// TestEmptyInputsShareAFingerprint: no rows are the same input whatever
// their schema.
func TestEmptyInputsShareAFingerprint(t *testing.T) {
	var zero Sum
	if got := sum(fromJSON(t, arrow.BinaryTypes.String, `[]`)); got != zero.String() {
		t.Errorf("no string rows %s, no rows %s", got, zero.String())
	}
	if !(zero.Rows() == 0 && len(zero.String()) == len(Version)+3+64) {
		t.Errorf("empty fingerprint %s", zero.String())
	}
}

// BenchmarkHasherAddInterleaved: rows of 30 partitions interleaved in
// each batch (a dynamic replace), each partition's rows hashed in order
// into its own fingerprint; compare its rows/s with BenchmarkSumAdd's.
func BenchmarkHasherAddInterleaved(b *testing.B) {
	ids := make([]int64, 8192)
	names := make([]string, 8192)
	rowKey := make([]int, 8192)
	for i := range ids {
		ids[i], names[i], rowKey[i] = int64(i), []string{"EUR", "USD", "GBP"}[i%3], i*7%30
	}
	rec := batch(ids, names, nil)
	defer rec.Release()
	sums := make([]*Sum, 30)
	for i := range sums {
		sums[i] = new(Sum)
	}
	var h Hasher
	for b.Loop() {
		h.Add(rec, sums, rowKey)
	}
	b.ReportMetric(float64(8192*b.N)/b.Elapsed().Seconds(), "rows/s")
}
