package fingerprint

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func batch(ids []int64, names []string, valid []bool) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ids, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(names, valid)
	return b.NewRecordBatch()
}

func sum(recs ...arrow.RecordBatch) string {
	var s Sum
	for _, r := range recs {
		s.Add(r)
		r.Release()
	}
	return s.String()
}

func TestSumIsOrderInsensitive(t *testing.T) {
	a := sum(batch([]int64{1, 2, 3}, []string{"a", "b", "c"}, nil))
	b := sum(batch([]int64{3}, []string{"c"}, nil), batch([]int64{2, 1}, []string{"b", "a"}, nil))
	if a != b {
		t.Errorf("sum(rows) = %s, sum(shuffled rows) = %s, want equal", a, b)
	}
}

func TestSumDetectsChanges(t *testing.T) {
	base := sum(batch([]int64{1, 2}, []string{"a", "b"}, nil))
	changed := map[string]string{
		"value":     sum(batch([]int64{1, 2}, []string{"a", "c"}, nil)),
		"swap":      sum(batch([]int64{1, 2}, []string{"b", "a"}, nil)),
		"null":      sum(batch([]int64{1, 2}, []string{"a", ""}, []bool{true, false})),
		"empty":     sum(batch([]int64{1, 2}, []string{"a", ""}, nil)),
		"duplicate": sum(batch([]int64{1, 2, 2}, []string{"a", "b", "b"}, nil)),
		"fewer":     sum(batch([]int64{1}, []string{"a"}, nil)),
	}
	for name, got := range changed {
		if got == base {
			t.Errorf("%s: sum = %s, same as the original", name, got)
		}
	}
	if changed["null"] == changed["empty"] {
		t.Error("null and empty string must differ")
	}
}

func TestBytesHashDistinguishesLengthAndPadding(t *testing.T) {
	vals := [][]byte{nil, {0}, {0, 0}, []byte("a"), []byte("a\x00"), []byte("abcdefgh"), []byte("abcdefgh\x00"), []byte("abcdefghi")}
	seen := map[uint64]string{}
	for _, v := range vals {
		h := bytesHash(v)
		if prev, ok := seen[h]; ok {
			t.Errorf("bytesHash(%q) = bytesHash(%q)", v, prev)
		}
		seen[h] = string(v)
	}
}

func BenchmarkSumAdd(b *testing.B) {
	ids := make([]int64, 8192)
	names := make([]string, 8192)
	for i := range ids {
		ids[i], names[i] = int64(i), []string{"EUR", "USD", "GBP"}[i%3]
	}
	rec := batch(ids, names, nil)
	defer rec.Release()
	var s Sum
	for b.Loop() {
		s.Add(rec)
	}
	b.ReportMetric(float64(8192*b.N)/b.Elapsed().Seconds(), "rows/s")
}
