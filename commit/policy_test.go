package commit

import (
	"errors"
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
			p, err := tc.pol.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= len(tc.bands)+3; n++ {
				band := tc.bands[min(n, len(tc.bands))-1]
				for range 200 {
					if b := p.Backoff(n); b <= band[0] || b > band[1] {
						t.Fatalf("Backoff(%d) = %v, want in (%v, %v]", n, b, band[0], band[1])
					}
				}
			}
		})
	}
}

func TestPolicyDefaultsAndValidation(t *testing.T) {
	p, err := Policy{}.WithDefaults()
	if err != nil || p != DefaultPolicy {
		t.Errorf("Policy{}.WithDefaults() = %+v, %v, want %+v", p, err, DefaultPolicy)
	}
	for _, bad := range []Policy{{Attempts: -1}, {Timeout: -time.Second}, {MinBackoff: time.Second, MaxBackoff: time.Millisecond}} {
		if err := bad.Validate(); !errors.Is(err, ErrBadPolicy) {
			t.Errorf("%+v.Validate() = %v, want ErrBadPolicy", bad, err)
		}
	}
	p = Policy{MinBackoff: time.Millisecond, MaxBackoff: 8 * time.Millisecond}
	for n := 1; n < 40; n++ {
		if b := p.Backoff(n); b <= 0 || b > p.MaxBackoff {
			t.Errorf("Backoff(%d) = %v, want in (0, %v]", n, b, p.MaxBackoff)
		}
	}
}
