package sink

import (
	"encoding/binary"
	"hash/maphash"
)

// keySet is a set of encoded keys (see encodeKeys), held compactly for
// keyed mode's per-partition memory: the keys' bytes back to back in
// append-only chunks, each key after its uvarint length, and an
// open-addressing table (linear probing, at most 3/4 full) of 8-byte
// slots locating them. A key costs its bytes plus one or two, plus 8 to
// 16 bytes of slots; a Go map[string]struct{} costs its bytes plus about
// 65 (BenchmarkKeyedMemory). The zero value is an empty set; not safe for
// concurrent use.
type keySet struct {
	seed   maphash.Seed
	chunks [][]byte // never reallocated: a key's position is stable
	slots  []uint64 // 0: empty; else slotTag | hash tag | chunk | offset
	n      int
}

const (
	slotTag    = 1 << 63 // set in every used slot
	tagShift   = 48      // bits 48..62: 15 bits of the key's hash
	chunkShift = 24      // bits 24..47: the chunk
	offsetMask = 1<<24 - 1
	firstChunk = 1 << 10
	maxChunk   = 1 << 20 // below 1<<24: an offset fits its 24 bits
	firstSlots = 8
)

// has reports whether s (nil: empty) holds key.
func (s *keySet) has(key string) bool {
	if s == nil || s.n == 0 {
		return false
	}
	_, found := s.find(key, maphash.String(s.seed, key))
	return found
}

// add puts key in s.
func (s *keySet) add(key string) {
	if s.slots == nil {
		s.seed, s.slots = maphash.MakeSeed(), make([]uint64, firstSlots)
	}
	h := maphash.String(s.seed, key)
	i, found := s.find(key, h)
	if found {
		return
	}
	s.slots[i] = s.store(key, h)
	s.n++
	if 4*s.n > 3*len(s.slots) {
		s.grow()
	}
}

// find returns the slot of key (found) or the empty slot it goes in.
func (s *keySet) find(key string, h uint64) (int, bool) {
	mask := len(s.slots) - 1
	tag := (h >> tagShift << tagShift) &^ slotTag
	for i := int(h) & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return i, false
		}
		if v&^(1<<tagShift-1)&^slotTag == tag && string(s.at(v)) == key {
			return i, true
		}
	}
}

// at is the key slot v locates.
func (s *keySet) at(v uint64) []byte {
	c := s.chunks[v>>chunkShift&offsetMask]
	off := int(v & offsetMask)
	n, w := binary.Uvarint(c[off:])
	return c[off+w : off+w+int(n)]
}

// store appends key to the chunks and returns its slot value. A key
// longer than maxChunk gets a chunk of its own, at offset 0, with fewer
// than binary.MaxVarintLen64 bytes left over: no key follows it there, so
// every offset is below maxChunk. The chunk index fits its 24 bits up to
// 16 Ti bytes of keys.
func (s *keySet) store(key string, h uint64) uint64 {
	need := binary.MaxVarintLen64 + len(key)
	last := len(s.chunks) - 1
	if last < 0 || cap(s.chunks[last])-len(s.chunks[last]) < need {
		size := firstChunk
		if last >= 0 {
			size = min(2*cap(s.chunks[last]), maxChunk)
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, need)))
		last++
	}
	c := s.chunks[last]
	off := len(c)
	c = binary.AppendUvarint(c, uint64(len(key)))
	s.chunks[last] = append(c, key...)
	return slotTag | (h>>tagShift<<tagShift)&^slotTag | uint64(last)<<chunkShift | uint64(off)
}

// grow doubles the slots.
func (s *keySet) grow() {
	old := s.slots
	s.slots = make([]uint64, 2*len(old))
	mask := len(s.slots) - 1
	for _, v := range old {
		if v == 0 {
			continue
		}
		i := int(maphash.Bytes(s.seed, s.at(v))) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = v
	}
}
