package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"hash"
)

// rowHasher computes the SHA-256 of rows laid out with their padding.
//
// SHA-256 of a row of some 50 bytes is one compression of one 64-byte
// block, but crypto/sha256's Sum256 costs about twice that: it pads and
// finishes the message through its generic buffered path. The layout
// therefore writes every row already padded as SHA-256 pads it (byte
// 0x80, zeros, the bit length), the hasher writes those whole blocks,
// and the digest is read from the hash's marshaled state: after the last
// padded block, the chaining value it holds (after a 4-byte magic) is
// the digest. paddedDigestWorks checks this once against Sum256; if a Go
// release ever marshals differently, every row is hashed with Sum256.
type rowHasher struct {
	sha   hash.Hash
	app   encoding.BinaryAppender
	state []byte
}

// paddedDigestWorks reports whether digests read from the marshaled
// state equal Sum256's, for messages of one to three blocks.
// (crypto/sha256 marshals "sha\x03", the eight state words big-endian,
// the buffered block and the length: after whole padded blocks the words
// are the digest.)
var paddedDigestWorks = func() bool {
	var h rowHasher
	for _, n := range []int{0, 1, 55, 56, 63, 64, 119, 120, 150} {
		msg := bytes.Repeat([]byte{byte(n)}, n)
		blocks := append(msg, make([]byte, paddedLen(n)-n)...)
		pad(blocks, n)
		want := sha256.Sum256(msg)
		if got, ok := h.padded(blocks); !ok || got != Hash(want) {
			return false
		}
	}
	return true
}()

// paddedLen is the length of a message of n bytes padded for SHA-256.
func paddedLen(n int) int { return (n + 9 + 63) &^ 63 }

// pad writes SHA-256's padding of the message of n bytes that starts
// padded, which is paddedLen(n) bytes long.
func pad(padded []byte, n int) {
	padded[n] = 0x80
	clear(padded[n+1 : len(padded)-8])
	binary.BigEndian.PutUint64(padded[len(padded)-8:], uint64(n)*8)
}

// padded hashes one padded message; ok is false when the state cannot
// be read.
func (h *rowHasher) padded(msg []byte) (Hash, bool) {
	if h.sha == nil {
		h.sha = sha256.New()
		app, ok := h.sha.(encoding.BinaryAppender)
		if !ok {
			return Hash{}, false
		}
		h.app = app
	}
	if h.app == nil {
		return Hash{}, false
	}
	h.sha.Reset()
	h.sha.Write(msg)
	var err error
	if h.state, err = h.app.AppendBinary(h.state[:0]); err != nil || len(h.state) < 4+len(Hash{}) {
		return Hash{}, false
	}
	return Hash(h.state[4 : 4+len(Hash{})]), true
}

// row is the Hash of row i of l.
func (h *rowHasher) row(l *layout, i int) Hash {
	if paddedDigestWorks {
		if d, ok := h.padded(l.padded(i)); ok {
			return d
		}
	}
	return sha256.Sum256(l.row(i))
}
