// Package fingerprint computes the fingerprint of a sequence of Arrow
// rows: SHA-256 of their canonical bytes, in order. Two inputs have the
// same fingerprint when they hold the same rows in the same order,
// whatever their batch boundaries; inputs that differ in any value, in
// their row order or in their column types have different fingerprints,
// unless SHA-256 has a collision.
//
// Each row is encoded into canonical bytes (see layout): every value at
// every depth (structs, lists, maps, unions, dictionaries), as its raw
// bytes, never as text, with nulls, lengths and element counts encoded so
// that two different rows of one schema never have the same bytes: the
// encoding of a row is self-delimiting given the column types. The
// fingerprint hashes one message:
//
//	"icerun-fingerprint-f3\n"  (the format version)
//	the column types           (see appendTypes; self-delimiting)
//	row 1, row 2, ..., row n   (canonical bytes, concatenated)
//
// and, should the column types change within one input (they never do
// on icerun's write paths: every batch is resolved to the table schema),
// byte 2, the number of rows since the last types (uvarint) and the new
// types, then the rows that follow. The message decodes uniquely into
// the column types and the rows, so two different inputs have two
// different messages, and equal fingerprints only by a SHA-256 collision:
// about 2^128 work by the birthday bound, at the full 256-bit digest. No
// algebraic structure is left to attack (a sum of row hashes, the
// previous construction, falls to a generalized-birthday search in about
// 2^24 hashes).
//
// The fingerprint's text is the format version, the row count and the
// digest in hex: "f3-<rows>-<64 hex digits>". Fingerprints of an earlier
// format never equal one of this format.
package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// Version prefixes every fingerprint of this format. Fingerprints of an
// older format ("f2", the sum of row hashes, or none) never equal one of
// this format: a partition written before the change is rewritten once,
// never wrongly skipped.
const Version = "f3"

// domain starts every hashed message: the format, so that no message of
// another format or use of SHA-256 in icerun is one of this format.
const domain = "icerun-fingerprint-" + Version + "\n"

// typesChange separates the rows of one set of column types from those of
// the next. The canonical bytes of a row (of at least one column) start
// with byte 0 or 1, so it is never taken for a row.
const typesChange = 2

// Sum is the fingerprint of rows added in order. The zero value holds no
// rows and is ready to use. A Sum is not safe for concurrent use.
type Sum struct {
	rows    int64
	sha     hash.Hash // nil until the first row
	types   []byte    // the column types of the rows last written
	segment int64     // rows written since types were
	hasher  *Hasher   // Add's, created on its first use
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

// write appends n rows, laid out as rows (their canonical bytes,
// concatenated), of the column types types.
func (s *Sum) write(types []byte, rows []byte, n int) {
	if n == 0 {
		return
	}
	switch {
	case s.sha == nil:
		s.sha = sha256.New()
		s.sha.Write([]byte(domain))
		s.sha.Write(types)
		s.types = append(s.types[:0], types...)
	case string(types) != string(s.types):
		s.sha.Write(binary.AppendUvarint([]byte{typesChange}, uint64(s.segment)))
		s.sha.Write(types)
		s.types = append(s.types[:0], types...)
		s.segment = 0
	}
	s.sha.Write(rows)
	s.rows += int64(n)
	s.segment += int64(n)
}

// Count adds n rows to the row count without hashing them, so the
// fingerprint no longer describes the rows. It exists only to measure
// what hashing costs (a benchmark's baseline); nothing else may call it.
func (s *Sum) Count(n int64) { s.rows += n }

// Rows is the number of rows added.
func (s *Sum) Rows() int64 { return s.rows }

// Digest is the SHA-256 of the message of the rows added so far.
func (s *Sum) Digest() [sha256.Size]byte {
	if s.sha == nil {
		return sha256.Sum256([]byte(domain))
	}
	var d [sha256.Size]byte
	s.sha.Sum(d[:0])
	return d
}

// String is the fingerprint: the format version, the row count and the
// digest in hex, as in "f3-1000-<64 hex digits>". More rows may be added
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
