package table

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeyFilterNeverTurnsAwayAKeyOfTheSet: a filter may let other keys
// through (then the map decides) but must let every key of its set
// through, or a merge-on-read change would leave that row live.
func TestKeyFilterNeverTurnsAwayAKeyOfTheSet(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 3, 1000, 50_000} {
		keys := map[string]struct{}{}
		for i := range n {
			keys[fmt.Sprintf("key-%d", i*7)] = struct{}{}
		}
		f := newKeyFilter(keys)
		for k := range keys {
			assert.True(t, f.mayHold([]byte(k)), "n=%d: %q turned away", n, k)
		}
		// Other keys mostly turned away: about 1 in 16 through.
		through := 0
		for i := range 100_000 {
			if f.mayHold([]byte(fmt.Sprintf("other-%d", i))) {
				through++
			}
		}
		assert.Less(t, through, 15_000, "n=%d: the filter lets %d of 100,000 other keys through", n, through)
	}
}

// TestIntFilterNeverTurnsAwayAValueOfTheSet is the same for the filter
// over a key column's integer values, negative and extreme ones too.
func TestIntFilterNeverTurnsAwayAValueOfTheSet(t *testing.T) {
	t.Parallel()
	values := []int64{0, 1, -1, 1 << 40, -(1 << 62), 9223372036854775807, -9223372036854775808}
	for i := range int64(20_000) {
		values = append(values, i*1000+7)
	}
	f := newIntFilter(values)
	for _, v := range values {
		assert.True(t, f.mayHoldInt(v), "%d turned away", v)
	}
	through := 0
	for i := range int64(100_000) {
		if f.mayHoldInt(i*1000 + 8) {
			through++
		}
	}
	assert.Less(t, through, 15_000, "the filter lets %d of 100,000 other values through", through)
}
