// Package fingerprint computes an order-insensitive fingerprint of Arrow
// rows: two inputs holding the same multiset of rows have the same
// fingerprint, whatever their batch boundaries and row order.
//
// Each row is hashed column by column (64-bit, FNV-style mixing of the
// value bits, with nulls distinct from every value); the row hashes are
// combined by two commutative sums, so the result does not depend on row
// order. It is a change detector for idempotent reruns, not a
// cryptographic digest.
package fingerprint

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Sum accumulates rows. The zero value is empty and ready to use. A Sum is
// not safe for concurrent use.
type Sum struct {
	rows int64
	a, b uint64
	buf  []uint64
}

const (
	offset = 14695981039346656037
	prime  = 1099511628211
	nullH  = 0x9e3779b97f4a7c15
)

func mix(h uint64) uint64 { // splitmix64 finaliser
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// Add folds every row of rec into the sum.
func (s *Sum) Add(rec arrow.RecordBatch) {
	s.buf = RowHashes(rec, s.buf)
	for _, h := range s.buf {
		s.AddHash(h)
	}
}

// AddHash folds one row, given by its RowHashes value, into the sum.
func (s *Sum) AddHash(h uint64) {
	s.a += h
	s.b += mix(h ^ 0x5bd1e995)
	s.rows++
}

// RowHashes returns one hash per row of rec, reusing buf's storage.
func RowHashes(rec arrow.RecordBatch, buf []uint64) []uint64 {
	n := int(rec.NumRows())
	if cap(buf) < n {
		buf = make([]uint64, n)
	}
	h := buf[:n]
	for i := range h {
		h[i] = offset
	}
	for _, col := range rec.Columns() {
		hashColumn(h, col)
	}
	for i, v := range h {
		h[i] = mix(v)
	}
	return h
}

// Rows is the number of rows added.
func (s *Sum) Rows() int64 { return s.rows }

// Merge adds the rows of o to s.
func (s *Sum) Merge(o *Sum) {
	s.rows += o.rows
	s.a += o.a
	s.b += o.b
}

// String is the fingerprint: row count and the two sums, in hex.
func (s *Sum) String() string { return fmt.Sprintf("%d-%016x%016x", s.rows, s.a, s.b) }

func step(h []uint64, i int, v uint64) { h[i] = (h[i] ^ v) * prime }

func hashColumn(h []uint64, col arrow.Array) {
	switch a := col.(type) {
	case *array.Int32:
		hashInts(h, a, a.Int32Values(), func(v int32) uint64 { return uint64(v) })
	case *array.Int64:
		hashInts(h, a, a.Int64Values(), func(v int64) uint64 { return uint64(v) })
	case *array.Date32:
		hashInts(h, a, a.Date32Values(), func(v arrow.Date32) uint64 { return uint64(v) })
	case *array.Timestamp:
		hashInts(h, a, a.TimestampValues(), func(v arrow.Timestamp) uint64 { return uint64(v) })
	case *array.Time64:
		hashInts(h, a, a.Time64Values(), func(v arrow.Time64) uint64 { return uint64(v) })
	case *array.Float32:
		hashInts(h, a, a.Float32Values(), func(v float32) uint64 { return uint64(math.Float32bits(v)) })
	case *array.Float64:
		hashInts(h, a, a.Float64Values(), func(v float64) uint64 { return math.Float64bits(v) })
	case *array.Boolean:
		for i := range h {
			switch {
			case a.IsNull(i):
				step(h, i, nullH)
			case a.Value(i):
				step(h, i, 1)
			default:
				step(h, i, 2)
			}
		}
	case *array.String:
		hashOffsets(h, a, a.ValueBytes(), a.ValueOffsets())
	case *array.LargeString:
		hashOffsets(h, a, a.ValueBytes(), a.ValueOffsets())
	case *array.Binary:
		hashOffsets(h, a, a.ValueBytes(), a.ValueOffsets())
	case *array.LargeBinary:
		hashOffsets(h, a, a.ValueBytes(), a.ValueOffsets())
	case *array.FixedSizeBinary:
		hashBytes(h, a, a.Value)
	default:
		// Decimals, nested and extension types: hash the value text. Slower,
		// but exact, and these are rare as bulk columns.
		hashBytes(h, col, func(i int) []byte { return []byte(col.ValueStr(i)) })
	}
}

func hashInts[T any](h []uint64, a arrow.Array, vals []T, bits func(T) uint64) {
	if a.NullN() == 0 {
		for i, v := range vals[:len(h)] {
			step(h, i, mix(bits(v)))
		}
		return
	}
	for i, v := range vals[:len(h)] {
		if a.IsNull(i) {
			step(h, i, nullH)
			continue
		}
		step(h, i, mix(bits(v)))
	}
}

// hashOffsets hashes variable-width values straight from the array's
// data and offsets buffers, without a copy per value.
func hashOffsets[O int32 | int64](h []uint64, a arrow.Array, data []byte, offs []O) {
	for i := range h {
		if a.IsNull(i) {
			step(h, i, nullH)
			continue
		}
		step(h, i, bytesHash(data[offs[i]:offs[i+1]]))
	}
}

func hashBytes(h []uint64, a arrow.Array, val func(int) []byte) {
	for i := range h {
		if a.IsNull(i) {
			step(h, i, nullH)
			continue
		}
		step(h, i, bytesHash(val(i)))
	}
}

// bytesHash hashes v eight bytes at a time; its length is mixed in, so
// values that differ only by trailing zero bytes differ.
func bytesHash(v []byte) uint64 {
	x := uint64(offset) ^ uint64(len(v))*prime
	for len(v) >= 8 {
		x = mix(x ^ binary.LittleEndian.Uint64(v))
		v = v[8:]
	}
	var tail uint64
	for i, c := range v {
		tail |= uint64(c) << (8 * i)
	}
	return mix(x ^ tail ^ 0xa0761d6478bd642f)
}
