package fingerprint

import (
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"
)

// Quick is a 128-bit hash of one row's canonical bytes: two hash/maphash
// hashes under the two seeds of a [QuickSeeds]. It is several times
// cheaper than the row's [Hash] and, unlike it, not collision resistant:
// it is for checks that compare two multisets of rows within one process
// (the rows a compaction read against the rows it wrote), never for an
// identity that outlives the process or meets an adversary.
type Quick [2]uint64

// QuickSeeds are the seeds of [Hasher.QuickHashes]: rows compare only
// under the same seeds.
type QuickSeeds [2]maphash.Seed

// NewQuickSeeds returns two fresh random seeds.
func NewQuickSeeds() QuickSeeds { return QuickSeeds{maphash.MakeSeed(), maphash.MakeSeed()} }

// QuickHashes returns one Quick per row of rec under seeds, reusing buf's
// storage. Two rows have equal canonical bytes exactly when [Hasher.Hashes]
// gives them equal hashes (but for a SHA-256 collision); QuickHashes gives
// them equal Quicks then, and different rows equal ones with a probability
// of about 2^-128 for rows not chosen against the seeds.
func (h *Hasher) QuickHashes(rec arrow.RecordBatch, seeds QuickSeeds, buf []Quick) []Quick {
	buf = resize(buf, int(rec.NumRows()))
	h.layout.build(rec)
	for i := range buf {
		r := h.layout.row(i)
		buf[i] = Quick{maphash.Bytes(seeds[0], r), maphash.Bytes(seeds[1], r)}
	}
	return buf
}
