package table

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/internal/fingerprint"
)

// contentSeeds are the seeds of every contentCheck of this process: a
// compaction's rows read and rows written are hashed under the same ones.
var contentSeeds = fingerprint.NewQuickSeeds()

// contentCheck is an order-insensitive summary of a multiset of rows: the
// count, and the sum (mod 2^64, per half) of their 128-bit row hashes
// (fingerprint.Quick: hash/maphash of each row's canonical bytes, several
// times cheaper than SHA-256). It catches lost, duplicated and changed
// rows of a non-adversarial rewrite; it is not collision resistant, and
// its sums mean nothing outside this process. With lineage the batches
// end with the rows' lineage columns, mixed into each row's hash (cheaper
// than hashing them as columns), so a row that lost or swapped its
// _row_id or _last_updated_sequence_number changes the sum too.
type contentCheck struct {
	rows    int64
	sum     [2]uint64
	lineage bool
	hasher  fingerprint.Hasher
	buf     []fingerprint.Quick
}

func (c *contentCheck) add(rec arrow.RecordBatch) {
	data := rec
	if c.lineage {
		data = withoutLineage(rec)
		defer data.Release()
	}
	c.buf = c.hasher.QuickHashes(data, contentSeeds, c.buf)
	var rowID, seq *array.Int64
	if c.lineage {
		n := len(rec.Columns())
		rowID, _ = rec.Column(n - 2).(*array.Int64)
		seq, _ = rec.Column(n - 1).(*array.Int64)
	}
	for i, h := range c.buf {
		lo, hi := h[0], h[1]
		if rowID != nil && seq != nil {
			lo ^= mix64(uint64(rowID.Value(i)) ^ lineageNull(rowID, i))
			hi ^= mix64(uint64(seq.Value(i)) ^ lineageNull(seq, i) ^ 0x9e3779b97f4a7c15)
		}
		c.sum[0] += lo
		c.sum[1] += hi
	}
	c.rows += rec.NumRows()
}

// lineageNull sets a bit pattern apart for a null lineage value.
func lineageNull(a *array.Int64, i int) uint64 {
	if a.IsNull(i) {
		return 0x5bd1e9955bd1e995
	}
	return 0
}

// mix64 is splitmix64's finalizer: every input bit changes about half of
// the output bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
