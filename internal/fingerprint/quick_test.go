package fingerprint

import (
	"testing"
)

// Two rows get equal Quicks exactly when they get equal Hashes: the same
// canonical bytes. The rows differ in a value, in a null against an empty
// string, and in where a string ends; some repeat.
func TestQuickHashesAgreeWithHashes(t *testing.T) {
	rec := batch(
		[]int64{1, 1, 1, 2, 1, 1, 12},
		[]string{"a", "a", "", "a", "", "ab", "b"},
		[]bool{true, true, true, true, false, true, true},
	)
	defer rec.Release()
	var h Hasher
	seeds := NewQuickSeeds()
	quick := h.QuickHashes(rec, seeds, nil)
	full := h.Hashes(rec, nil)
	if len(quick) != int(rec.NumRows()) {
		t.Fatalf("%d quick hashes for %d rows", len(quick), rec.NumRows())
	}
	for i := range quick {
		for j := range quick {
			if (quick[i] == quick[j]) != (full[i] == full[j]) {
				t.Errorf("rows %d and %d: quick equal %v, full equal %v", i, j, quick[i] == quick[j], full[i] == full[j])
			}
		}
	}
	if again := h.QuickHashes(rec, seeds, nil); again[0] != quick[0] {
		t.Error("the same row under the same seeds hashed twice differs")
	}
	if other := h.QuickHashes(rec, NewQuickSeeds(), nil); other[0] == quick[0] {
		t.Error("other seeds give the same hash")
	}
}

// BenchmarkRowHashes hashes the rows of one batch with SHA-256 (Hashes,
// the baseline) and with maphash (QuickHashes): compare their rows/s in
// one run.
func BenchmarkRowHashes(b *testing.B) {
	rec := benchBatch()
	defer rec.Release()
	b.Run("sha256", func(b *testing.B) {
		var h Hasher
		var buf []Hash
		for b.Loop() {
			buf = h.Hashes(rec, buf)
		}
		b.ReportMetric(float64(8192*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("quick", func(b *testing.B) {
		var h Hasher
		var buf []Quick
		seeds := NewQuickSeeds()
		for b.Loop() {
			buf = h.QuickHashes(rec, seeds, buf)
		}
		b.ReportMetric(float64(8192*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
