package rowdelete

import (
	"container/list"
	"sync"
)

// positionCache keeps the positions of the position delete files this
// process wrote or read last, by path, up to cacheMaxPositions in all,
// least recently used out first. A delete file is never changed once
// written (its path names one file for good), so an entry is its
// content for as long as it is kept: a merge-on-read change reads the
// delete files the change before it wrote from memory instead of
// decoding them again (twice: to compare with the stored rows and to
// locate them).
type positionCache struct {
	mu      sync.Mutex
	entries map[string]*list.Element // of *cachedFile
	lru     list.List                // front: most recently used
	size    int                      // positions held
}

type cachedFile struct {
	path   string
	byFile map[string][]int64 // data file -> positions; never changed
	size   int
}

// cacheMaxPositions bounds the cache: 2M positions, about 16 MiB.
const cacheMaxPositions = 2 << 20

var positions = &positionCache{entries: map[string]*list.Element{}}

// get returns the positions of delete file path, when kept.
func (c *positionCache) get(path string) (map[string][]int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedFile).byFile, true
}

// put keeps byFile as the positions of delete file path (byFile must
// not be changed after), unless it alone is over the bound.
func (c *positionCache) put(path string, byFile map[string][]int64) {
	n := 0
	for _, p := range byFile {
		n += len(p)
	}
	if n > cacheMaxPositions {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[path]; ok {
		return
	}
	c.entries[path] = c.lru.PushFront(&cachedFile{path: path, byFile: byFile, size: n})
	c.size += n
	for c.size > cacheMaxPositions {
		old := c.lru.Back().Value.(*cachedFile)
		c.lru.Remove(c.lru.Back())
		delete(c.entries, old.path)
		c.size -= old.size
	}
}
