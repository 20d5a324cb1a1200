package arrowmem

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

var _ memory.Allocator = (*Pool)(nil)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestPoolHandsOutZeroedAlignedBuffers: every buffer, new or reused, is
// zeroed and 64-byte aligned, at every size class.
func TestPoolHandsOutZeroedAlignedBuffers(t *testing.T) {
	var p Pool
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4096, 1 << 20, 3<<20 + 5} {
		for range 3 {
			b := p.Allocate(n)
			if len(b) != n || addr(b)%64 != 0 {
				t.Fatalf("Allocate(%d): len %d, address %% 64 = %d", n, len(b), addr(b)%64)
			}
			if !bytes.Equal(b, make([]byte, n)) {
				t.Fatalf("Allocate(%d) is not zeroed", n)
			}
			for i := range b {
				b[i] = 0xFF
			}
			p.Free(b)
		}
	}
}

// TestPoolReusesFreedBuffers: a freed buffer serves the next allocation
// of its class (the point of the Pool); sync.Pool may drop one, so the
// test looks for reuse over many rounds.
func TestPoolReusesFreedBuffers(t *testing.T) {
	var p Pool
	reused := 0
	for range 100 {
		a := p.Allocate(100_000)
		at := addr(a)
		p.Free(a)
		b := p.Allocate(90_000)
		if addr(b) == at {
			reused++
		}
		p.Free(b)
	}
	if reused < 50 {
		t.Errorf("a freed buffer served the next allocation %d times in 100", reused)
	}
}

// TestPoolPoolsOnlyItsOwnLiveBuffers: a slice the Pool never made, and a
// buffer freed twice, are never handed out again: two owners would share
// memory.
func TestPoolPoolsOnlyItsOwnLiveBuffers(t *testing.T) {
	var p Pool
	foreign := make([]byte, 4096)
	p.Free(foreign)
	a := p.Allocate(4096)
	p.Free(a)
	p.Free(a) // a double free
	seen := map[uintptr]bool{}
	var held [][]byte
	for range 50 {
		b := p.Allocate(4096)
		if addr(b) == addr(foreign) {
			t.Fatal("a slice the Pool never made was handed out")
		}
		if seen[addr(b)] {
			t.Fatal("one buffer was handed out twice while held")
		}
		seen[addr(b)] = true
		held = append(held, b)
	}
	_ = held
}

// TestReallocateKeepsContents: growing keeps the bytes and zeroes the
// rest, in place or in a new buffer.
func TestReallocateKeepsContents(t *testing.T) {
	var p Pool
	b := p.Allocate(10)
	copy(b, "0123456789")
	b = p.Reallocate(50, b) // within the 64-byte class
	if string(b[:10]) != "0123456789" || !bytes.Equal(b[10:], make([]byte, 40)) {
		t.Fatalf("in place: %q", b)
	}
	b = p.Reallocate(5000, b)
	if string(b[:10]) != "0123456789" || !bytes.Equal(b[10:], make([]byte, 4990)) {
		t.Fatalf("moved: %q", b[:20])
	}
	p.Free(b)
}

// TestPoisoningPoolPoisonsFreedBuffers: what a poisoning Pool frees is
// poison from then on, and never handed out again.
func TestPoisoningPoolPoisonsFreedBuffers(t *testing.T) {
	p := NewPoisoning()
	b := p.Allocate(1000)
	copy(b, "values")
	p.Free(b)
	if !bytes.Equal(b[:cap(b)], bytes.Repeat([]byte{PoisonByte}, cap(b))) {
		t.Fatal("a freed buffer is not poisoned")
	}
	for range 20 {
		if addr(p.Allocate(1000)) == addr(b) {
			t.Fatal("a poisoned buffer was handed out")
		}
	}
}

// TestPoolUnderConcurrentUse: buffers allocated and freed on many
// goroutines at once are never shared (run with -race).
func TestPoolUnderConcurrentUse(t *testing.T) {
	var p Pool
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				b := p.Allocate(64 + (g*i)%5000)
				for j := range b {
					b[j] = byte(g)
				}
				for j := range b {
					if b[j] != byte(g) {
						t.Errorf("goroutine %d: buffer written by another", g)
						return
					}
				}
				p.Free(b)
			}
		})
	}
	wg.Wait()
}

func BenchmarkAllocateFree(b *testing.B) {
	var p Pool
	for b.Loop() {
		p.Free(p.Allocate(512 << 10))
	}
}

func BenchmarkGoAllocator(b *testing.B) {
	mem := memory.NewGoAllocator()
	for b.Loop() {
		mem.Free(mem.Allocate(512 << 10))
	}
}
