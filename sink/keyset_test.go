package sink

import (
	"fmt"
	"strings"
	"testing"
)

// A keySet holds exactly the keys added, through growth, across chunks,
// and with keys longer than a chunk.
func TestKeySet(t *testing.T) {
	t.Parallel()
	var s keySet
	if s.has("") || (*keySet)(nil).has("x") {
		t.Fatal("empty set holds a key")
	}
	big := strings.Repeat("k", maxChunk+5)
	var keys []string
	for i := range 50_000 {
		keys = append(keys, fmt.Sprintf("key-%d", i))
	}
	keys = append(keys, "", big, big+"x", "\x00")
	for i, k := range keys {
		s.add(k)
		s.add(k) // twice: once in the set
		if !s.has(k) {
			t.Fatalf("has(%.20q) after add = false", k)
		}
		if i%1000 == 0 && s.has(fmt.Sprintf("other-%d", i)) {
			t.Fatalf("has(other-%d) = true", i)
		}
	}
	if s.n != len(keys) {
		t.Errorf("n = %d, want %d", s.n, len(keys))
	}
	for _, k := range keys {
		if !s.has(k) {
			t.Errorf("has(%.20q) = false, want true", k)
		}
	}
	for _, k := range []string{"key-50000", "key-", big[:len(big)-1], big + "y", "\x00\x00"} {
		if s.has(k) {
			t.Errorf("has(%.20q) = true, want false", k)
		}
	}
}
