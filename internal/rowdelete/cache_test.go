package rowdelete

import (
	"container/list"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cache keeps what was put, by path, and lets the least recently
// used files go once it holds more than its bound; a file over the
// bound alone is not kept.
func TestPositionCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := &positionCache{entries: map[string]*list.Element{}}
	third := cacheMaxPositions / 3
	file := func(i int) map[string][]int64 {
		return map[string][]int64{fmt.Sprintf("data-%d", i): make([]int64, third)}
	}
	for i := range 3 {
		c.put(fmt.Sprintf("del-%d", i), file(i))
	}
	_, ok := c.get("del-0") // del-1 is now the least recently used
	assert.True(t, ok, "del-0 kept")
	c.put("del-3", file(3))
	_, ok = c.get("del-1")
	assert.False(t, ok, "del-1, least recently used, still kept past the bound")
	for _, p := range []string{"del-0", "del-2", "del-3"} {
		got, ok := c.get(p)
		if assert.True(t, ok, "%s kept", p) {
			assert.Len(t, got[fmt.Sprintf("data-%s", p[4:])], third, "positions of %s", p)
		}
	}
	assert.LessOrEqual(t, c.size, cacheMaxPositions)
	c.put("huge", map[string][]int64{"data": make([]int64, cacheMaxPositions+1)})
	_, ok = c.get("huge")
	assert.False(t, ok, "a file over the bound alone is kept")
}
