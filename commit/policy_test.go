package commit

import (
	"testing"
	"time"
)

// TestBackoffFavoursLongestWaiter: the wait after the n-th conflict is in a
// band that lies entirely below the band of the (n-1)-th, down to the
// floor band, so a writer that lost more races never waits longer than one
// that lost fewer.
func TestBackoffFavoursLongestWaiter(t *testing.T) {
	for _, tc := range []struct {
		name string
		pol  Policy
		// bands[i] is the (lo, hi] range of the wait after conflict i+1;
		// the last band repeats.
		bands [][2]time.Duration
	}{
		{"default", DefaultPolicy, [][2]time.Duration{{80 * time.Millisecond, 160 * time.Millisecond}, {40 * time.Millisecond, 80 * time.Millisecond}, {20 * time.Millisecond, 40 * time.Millisecond}, {10 * time.Millisecond, 20 * time.Millisecond}}},
		{"first band capped by MaxBackoff", Policy{MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}, [][2]time.Duration{{2 * time.Millisecond, 4 * time.Millisecond}, {time.Millisecond, 2 * time.Millisecond}, {time.Millisecond / 2, time.Millisecond}}},
		{"one band", Policy{MinBackoff: 5 * time.Millisecond, MaxBackoff: 5 * time.Millisecond}, [][2]time.Duration{{5 * time.Millisecond / 2, 5 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.pol.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= len(tc.bands)+3; n++ {
				band := tc.bands[min(n, len(tc.bands))-1]
				for range 200 {
					if b := p.backoff(n); b <= band[0] || b > band[1] {
						t.Fatalf("backoff(%d) = %v, want in (%v, %v]", n, b, band[0], band[1])
					}
				}
			}
		})
	}
}
