package pagecodec_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"

	"github.com/icerun/icerun/internal/pagecodec"
)

// builtin is arrow-go's own zstd codec, which the package replaced.
var builtin = func() compress.Codec {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	return c.(*pagecodec.Codec).Codec
}()

func registered(t testing.TB) *pagecodec.Codec {
	t.Helper()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	pc, ok := c.(*pagecodec.Codec)
	if !ok {
		t.Fatalf("registered zstd codec is %T", c)
	}
	return pc
}

func TestBuiltinReplaced(t *testing.T) {
	registered(t)
	if !pagecodec.Builtin(builtin) {
		t.Fatalf("the codec kept as base is %T, not arrow-go's built-in", builtin)
	}
}

// input makes n bytes of one of three textures: random, a small alphabet,
// and long runs.
func input(r *rand.Rand, n, kind int) []byte {
	src := make([]byte, n)
	for i := range src {
		switch kind % 3 {
		case 0:
			src[i] = byte(r.IntN(256))
		case 1:
			src[i] = byte(r.IntN(8))
		default:
			src[i] = byte(i / 1000 % 251)
		}
	}
	return src
}

// checkSame fails unless the page codec compresses src at level to the
// bytes arrow-go's codec makes, and they decompress to src.
func checkSame(t *testing.T, c *pagecodec.Codec, src []byte, level int) {
	t.Helper()
	want := builtin.EncodeLevel(nil, src, level)
	got := c.EncodeLevel(nil, src, level)
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeLevel(%d bytes, level %d): %d bytes, arrow-go's codec makes %d, or other bytes", len(src), level, len(got), len(want))
	}
	if level == compress.DefaultCompressionLevel {
		if e := c.Encode(nil, src); !bytes.Equal(e, builtin.Encode(nil, src)) {
			t.Fatalf("Encode(%d bytes) differs from arrow-go's codec", len(src))
		}
	}
	if back := c.Decode(nil, got); !bytes.Equal(back, src) {
		t.Fatalf("round trip of %d bytes gave %d bytes", len(src), len(back))
	}
}

// Around the window, and at levels of each of zstd's four encoders
// (fastest, default, better, best), the bytes are arrow-go's.
func TestSameBytesAsArrow(t *testing.T) {
	c := registered(t)
	sizes := []int{0, 1, 100, 4096, 5 << 20}
	for _, w := range pagecodec.Windows {
		sizes = append(sizes, w-1, w, w+1)
	}
	levels := []int{compress.DefaultCompressionLevel, -5, 1, 3, 7, 11}
	if testing.Short() {
		levels = levels[1:3] // the fastest encoder, at the level icerun writes (1); the others take seconds a megabyte
	}
	for _, level := range levels {
		t.Run(fmt.Sprint("level ", level), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, uint64(level+10)))
			for _, n := range sizes {
				for kind := range 3 {
					if kind == 0 && n > 1<<16 {
						continue // random bytes barely match: nothing a window changes
					}
					if level >= 10 && n > 1<<20+1 {
						continue // the best-compression encoder takes seconds a megabyte
					}
					checkSame(t, c, input(r, n, kind), level)
				}
			}
		})
	}
}

func FuzzSameBytesAsArrow(f *testing.F) {
	f.Add([]byte("a parquet page"), int8(compress.DefaultCompressionLevel), uint8(0))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 4096), int8(3), uint8(1))
	f.Add([]byte{}, int8(22), uint8(2))
	c := registered(f)
	f.Fuzz(func(t *testing.T, src []byte, level int8, grow uint8) {
		// grow stretches the input towards the window, where a difference
		// in window size would first show.
		for range grow % 8 {
			src = append(src, src...)
			if len(src) > 2*pagecodec.Windows[len(pagecodec.Windows)-1] {
				break
			}
		}
		checkSame(t, c, src, int(level))
	})
}

// The page codec must not cost CPU for the memory it saves:
// go test -bench . -count 6 ./internal/pagecodec, arrow beside page.
func BenchmarkEncodeLevel(b *testing.B) {
	c := registered(b)
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{64 << 10, 1 << 20} {
		src := input(r, n, 1)
		for _, codec := range []struct {
			name string
			c    compress.Codec
		}{{"arrow", builtin}, {"page", c}} {
			b.Run(fmt.Sprintf("%s/%dKiB", codec.name, n>>10), func(b *testing.B) {
				b.SetBytes(int64(n))
				dst := make([]byte, 0, 2*n)
				for b.Loop() {
					dst = codec.c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
				}
			})
		}
	}
}

// An encoder's history is its window and one block (lowered encoder
// memory), not twice the window: a fresh codec compressing a 1 MiB page
// allocates less than 1.5 MiB beyond the output.
func TestEncoderMemory(t *testing.T) {
	src := input(rand.New(rand.NewPCG(5, 6)), 1<<20, 2)
	dst := make([]byte, 0, 2<<20)
	c := &pagecodec.Codec{Codec: builtin}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := c.EncodeLevel(dst, src, 1)
	runtime.ReadMemStats(&after)
	if back := c.Decode(nil, out); !bytes.Equal(back, src) {
		t.Fatal("round trip failed")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 3<<19 {
		t.Errorf("compressing 1 MiB allocated %d bytes, want at most %d", got, 3<<19)
	}
}
