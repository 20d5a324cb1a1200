package snapshotcommit

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// TestCombineIsSHA256: the input fingerprint of several partitions is
// SHA-256 of their sorted fingerprints (a 64-bit FNV before, which is
// not collision resistant), whatever their order; one partition's is
// its own.
func TestCombineIsSHA256(t *testing.T) {
	a, b := "f4-1-"+fmt.Sprintf("%064x", 1), "f4-2-"+fmt.Sprintf("%064x", 2)
	want := fmt.Sprintf("parts-2-%x", sha256.Sum256([]byte(a+"\n"+b+"\n")))
	for _, fps := range [][]string{{a, b}, {b, a}} {
		if got := combine(fps); got != want {
			t.Errorf("combine(%q) = %s, want %s", fps, got, want)
		}
	}
	if got := combine([]string{a}); got != a {
		t.Errorf("combine(%q) = %s, want %s", a, got, a)
	}
}
