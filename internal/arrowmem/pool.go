// Package arrowmem is an Arrow allocator that reuses the buffers Arrow
// frees. arrow-go's default allocator makes a new, zeroed Go slice for
// every buffer and leaves freed ones to the garbage collector: a reader
// decoding batch after batch of a large file pays, for every batch, the
// page faults of fresh memory, its zeroing and the collections that
// follow. A [Pool] hands a freed buffer to the next allocation of its size
// class instead (cleared, as fresh memory is), through a sync.Pool, so the
// garbage collector still takes what stays unused.
//
// Reusing memory makes Arrow's contract binding: a buffer is not read
// after its last Release. A Pool reuses only buffers it allocated and
// still counts as handed out, so a buffer freed twice, or a slice it never
// made, is never pooled. [NewPoisoning] is a Pool for tests that fills
// every freed buffer with [PoisonByte] and never reuses it, so a read
// after the last Release sees poison instead of the values.
package arrowmem

import (
	"math/bits"
	"sync"
	"unsafe"
)

const (
	minClass = 6  // 64 bytes: Arrow's buffer alignment
	maxClass = 26 // 64 MiB: larger buffers are left to the garbage collector
)

// PoisonByte fills the buffers a poisoning Pool frees.
const PoisonByte = 0xDB

// Pool is an Arrow memory.Allocator that reuses freed buffers. Its zero
// value is ready to use; it is safe for concurrent use.
type Pool struct {
	classes [maxClass + 1]sync.Pool // *[]byte of cap 1<<class
	out     sync.Map                // unsafe.Pointer of a handed-out buffer -> struct{}
	poison  bool
}

// Default is the Pool that icerun's readers use unless given another
// allocator.
var Default = new(Pool)

// NewPoisoning returns a Pool that never reuses a buffer and fills each
// freed one with PoisonByte: a test allocator that turns a read after the
// last Release into wrong values.
func NewPoisoning() *Pool { return &Pool{poison: true} }

// class is the size class of a buffer of n bytes: its capacity is
// 1<<class.
func class(n int) int { return max(minClass, bits.Len(uint(n-1))) }

// Allocate returns a zeroed buffer of size bytes, 64-byte aligned.
func (p *Pool) Allocate(size int) []byte {
	c := class(max(size, 1))
	if c > maxClass {
		return make([]byte, size) // the garbage collector's (Free drops it)
	}
	var b []byte
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		b = (*v)[:size]
		clear(b)
	} else {
		// A power-of-two size of at least 64 bytes is allocated at a
		// multiple of its size (small) or of the page size (large).
		b = make([]byte, size, 1<<c)
	}
	p.out.Store(unsafe.Pointer(unsafe.SliceData(b)), struct{}{})
	return b
}

// Reallocate resizes b to size bytes, keeping its contents; new bytes
// are zero.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes b back, when it is a buffer this Pool handed out and has
// not taken back since.
func (p *Pool) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	if _, ok := p.out.LoadAndDelete(unsafe.Pointer(unsafe.SliceData(b))); !ok {
		return
	}
	b = b[:cap(b)]
	if p.poison {
		for i := range b {
			b[i] = PoisonByte
		}
		return
	}
	if c := class(cap(b)); c <= maxClass && cap(b) == 1<<c {
		p.classes[c].Put(&b)
	}
}
