package table

import (
	"hash/maphash"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// keyFilter is a one-hash Bloom filter over a set of encoded keys: a key
// whose bit is clear is not in the set. A merge-on-read change asks it
// for every row of the partition it reads and looks up the map only for
// the few rows whose bit is set (about 1 in 16 of those not in the set,
// with 16 bits per key), which is several times cheaper than a map
// lookup per row.
type keyFilter struct {
	seed  maphash.Seed
	bits  []uint64
	shift uint // 64 - log2(len(bits)*64): a hash's top bits pick its bit
}

// filterBitsPerKey and filterMaxBits size the filter: 16 bits per key,
// at most 2^27 bits (16 MiB), at least 64.
const (
	filterBitsPerKey = 16
	filterMaxBits    = 1 << 27
)

func newKeyFilter(keys map[string]struct{}) *keyFilter {
	f := sizedFilter(len(keys))
	for k := range keys {
		f.set(maphash.String(f.seed, k))
	}
	return f
}

// newIntFilter is a filter over integer values (a key column's), hashed
// by a multiplication instead of maphash: mayHoldInt.
func newIntFilter(values []int64) *keyFilter {
	f := sizedFilter(len(values))
	for _, v := range values {
		f.set(intHash(v))
	}
	return f
}

func sizedFilter(keys int) *keyFilter {
	n := uint64(min(max(keys*filterBitsPerKey, 64), filterMaxBits))
	logBits := bits.Len64(n - 1) // round up to a power of two
	return &keyFilter{seed: maphash.MakeSeed(), bits: make([]uint64, (1<<logBits)/64), shift: uint(64 - logBits)}
}

func (f *keyFilter) set(hash uint64) {
	h := hash >> f.shift
	f.bits[h/64] |= 1 << (h % 64)
}

func (f *keyFilter) has(hash uint64) bool {
	h := hash >> f.shift
	return f.bits[h/64]&(1<<(h%64)) != 0
}

// intHash spreads v over 64 bits (Fibonacci hashing: the top bits of the
// product by 2^64 / golden ratio are well mixed).
func intHash(v int64) uint64 { return uint64(v) * 0x9E3779B97F4A7C15 }

// mayHoldInt reports whether v may be one of a newIntFilter's values.
func (f *keyFilter) mayHoldInt(v int64) bool { return f.has(intHash(v)) }

// intValues reads a column of the types a keyRange collects as integers
// (int, long, date, time, timestamp) as int64, the way keyRange.add does;
// nil for any other type or a column with nulls.
func intValues(col arrow.Array) func(int) int64 {
	if col.NullN() > 0 {
		return nil
	}
	switch a := col.(type) {
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int64:
		return a.Value
	case *array.Date32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Time64:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Timestamp:
		return func(i int) int64 { return int64(a.Value(i)) }
	}
	return nil
}

// mayHold reports whether key may be in the set (false: it is not).
func (f *keyFilter) mayHold(key []byte) bool { return f.has(maphash.Bytes(f.seed, key)) }
