// Package pagecodec replaces arrow-go's built-in zstd codec for Parquet
// with one that writes the same bytes with far less memory.
//
// arrow-go compresses each Parquet page with a pooled zstd encoder of the
// default 8 MiB window, and the encoder keeps a history buffer of twice
// the window: 16 MiB for every page compressed at once, half the live heap
// of a two-encoder write. A page is about 1 MiB, so here an input is
// compressed by an encoder whose window is the smallest of [Windows] that
// holds it, with lowered encoder memory: its history is the window and one
// 128 KiB block (about 1.1 MiB for a 1 MiB page, where a default encoder
// keeps twice the window).
// For an input no larger than the window, the zstd encoder's output does
// not depend on the window size, so the bytes are the same as arrow-go's
// (a property of klauspost/compress that the tests hold it to, at every
// encoder level and on both sides of each window); larger inputs,
// decoding and streams go to arrow-go's own codec.
//
// Importing the package registers the codec with arrow-go (the extension
// point arrow-go documents for this), for every Parquet writer of the
// process. It stays out of the way of a zstd codec the program registered
// itself: only arrow-go's built-in one is replaced.
package pagecodec

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Windows are the encoder windows, smallest first (read only). An input
// larger than the last goes to arrow-go's codec (its window is 8 MiB).
var Windows = []int{512 << 10, 1 << 20, 2 << 20, 4 << 20}

// Codec is the page codec: arrow-go's zstd codec for everything but the
// one-shot compression of inputs that fit one of the Windows.
type Codec struct {
	compress.Codec
	pools sync.Map // encoderKind -> *sync.Pool of *zstd.Encoder
}

type encoderKind struct {
	level  zstd.EncoderLevel
	window int
}

// window is the smallest of Windows that holds n bytes, or 0.
func window(n int) int {
	for _, w := range Windows {
		if n <= w {
			return w
		}
	}
	return 0
}

// Encode compresses src at the default level, as arrow-go's Encode does.
func (c *Codec) Encode(dst, src []byte) []byte {
	w := window(len(src))
	if w == 0 {
		return c.Codec.Encode(dst, src)
	}
	return c.encode(dst, src, encoderKind{zstd.SpeedDefault, w})
}

// EncodeLevel compresses src at level, mapped to an encoder level as
// arrow-go maps it.
func (c *Codec) EncodeLevel(dst, src []byte, level int) []byte {
	w := window(len(src))
	if w == 0 {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	l := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		l = zstd.SpeedDefault
	}
	return c.encode(dst, src, encoderKind{l, w})
}

func (c *Codec) encode(dst, src []byte, kind encoderKind) []byte {
	p, ok := c.pools.Load(kind)
	if !ok {
		p, _ = c.pools.LoadOrStore(kind, &sync.Pool{New: func() any {
			// The options of arrow-go's pooled encoders, and a smaller window.
			enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(kind.level),
				zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true), zstd.WithWindowSize(kind.window),
				zstd.WithLowerEncoderMem(true)) // history: the window and one block, not twice the window
			if err != nil {
				panic(fmt.Sprintf("pagecodec: zstd encoder: %v", err)) // the options are constant
			}
			return enc
		}})
	}
	pool := p.(*sync.Pool)
	enc := pool.Get().(*zstd.Encoder)
	defer pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

// Builtin reports whether codec is arrow-go's built-in zstd codec.
func Builtin(codec compress.Codec) bool {
	return fmt.Sprintf("%T", codec) == "compress.zstdCodec"
}

func init() {
	base, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil || !Builtin(base) {
		return
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &Codec{Codec: base})
}
