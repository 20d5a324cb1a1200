// Package fingerprint computes the fingerprint of a sequence of Arrow
// rows. Two inputs have the same fingerprint when they hold the same rows
// in the same order, whatever their batch boundaries; inputs that differ
// in any value, in their row order or in their column types have
// different fingerprints, unless SHA-256 has a collision.
//
// The rows are hashed column by column (see columns.go): each column's
// values, at every depth (structs, lists, maps, unions, dictionaries), as
// their raw bytes, never as text, go to streams of their own (its nulls,
// the lengths of its strings, its values), each a SHA-256, so that the
// values of most columns are hashed straight from the Arrow buffers. The
// fingerprint is SHA-256 of one message:
//
//	"icerun-fingerprint-f4\n"   (the format version)
//	the column types            (see appendTypes; self-delimiting)
//	the row count               (uvarint)
//	per column, the SHA-256 of its values, nulls and lengths streams
//
// and, should the column types change within one input (they never do
// on icerun's write paths: every batch is resolved to the table schema),
// the types, row count and digests of the rows that follow, after those
// of the rows before. Each stream decodes uniquely given the column's
// type and the row count, and the message into the types, the row
// counts and the streams' digests, so two different inputs have equal
// fingerprints only by a SHA-256 collision: about 2^128 work by the
// birthday bound, at the full 256-bit digest. No algebraic structure is
// left to attack (a sum of row hashes, an earlier construction, falls to
// a generalized-birthday search in about 2^24 hashes).
//
// The fingerprint's text is the format version, the row count and the
// digest in hex: "f4-<rows>-<64 hex digits>". Fingerprints of an earlier
// format never equal one of this format.
//
// Hasher.Hashes hashes single rows (a key's row, an upsert's change):
// SHA-256 of the row's canonical bytes, each column's value after the
// other ([layout]).
package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Version prefixes every fingerprint of this format. Fingerprints of an
// older format ("f3", row by row; "f2", the sum of row hashes; or none)
// never equal one of this format: a partition written before the change
// is rewritten once, never wrongly skipped.
const Version = "f4"

// domain starts every hashed message: the format, so that no message of
// another format or use of SHA-256 in icerun is one of this format.
const domain = "icerun-fingerprint-" + Version + "\n"

// Sum is the fingerprint of rows added in order. The zero value holds no
// rows and is ready to use. A Sum is not safe for concurrent use.
type Sum struct {
	rows    int64
	done    []byte      // the message's finished segments
	types   []byte      // the column types of the segment being added to
	segment int64       // the rows of that segment
	cols    []columnSum // its columns' streams
	hasher  *Hasher     // Add's, created on its first use
}

// Add appends every row of rec, in order.
func (s *Sum) Add(rec arrow.RecordBatch) {
	if rec.NumRows() == 0 {
		return
	}
	if s.hasher == nil {
		s.hasher = new(Hasher)
	}
	s.hasher.Add(rec, []*Sum{s}, nil)
}

// begin readies s for rows of the column types types (ncols columns):
// a change of types ends the segment being added to.
func (s *Sum) begin(types []byte, ncols int) {
	if s.types != nil && string(types) == string(s.types) {
		return
	}
	if s.types != nil {
		s.done = s.appendSegment(s.done)
	}
	s.types = append(s.types[:0], types...)
	s.segment = 0
	s.cols = make([]columnSum, ncols)
}

// appendSegment appends the segment being added to: its column types,
// its row count (uvarint) and the digests of each column's streams.
func (s *Sum) appendSegment(dst []byte) []byte {
	dst = binary.AppendUvarint(append(dst, s.types...), uint64(s.segment))
	for i := range s.cols {
		dst = s.cols[i].appendDigests(dst)
	}
	return dst
}

// Count adds n rows to the row count without hashing them, so the
// fingerprint no longer describes the rows. It exists only to measure
// what hashing costs (a benchmark's baseline); nothing else may call it.
func (s *Sum) Count(n int64) { s.rows += n }

// Rows is the number of rows added.
func (s *Sum) Rows() int64 { return s.rows }

// Digest is the SHA-256 of the message of the rows added so far.
func (s *Sum) Digest() [sha256.Size]byte {
	msg := append([]byte(domain), s.done...)
	if s.types != nil {
		msg = s.appendSegment(msg)
	}
	return sha256.Sum256(msg)
}

// String is the fingerprint: the format version, the row count and the
// digest in hex, as in "f4-1000-<64 hex digits>". More rows may be added
// after it is read.
func (s *Sum) String() string {
	d := s.Digest()
	out := make([]byte, 0, len(Version)+22+2*len(d))
	out = append(out, Version...)
	out = append(out, '-')
	out = strconv.AppendInt(out, s.rows, 10)
	out = append(out, '-')
	return string(hex.AppendEncode(out, d[:]))
}
