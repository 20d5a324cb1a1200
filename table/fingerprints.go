package table

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icerun/icerun/internal/fingerprint"
)

// hasher adds input batches to the partitions' fingerprints on a
// goroutine of its own, beside the encoders: the per-row SHA-256 is
// about a seventh of a replace's CPU time, and nothing needs a
// fingerprint before the commit. Batches queue (at most hasherQueue)
// until hashed, so a hasher slower than the encoders holds the input
// back rather than letting memory grow.
type hasher struct {
	jobs chan hashJob
	done chan struct{}
}

const hasherQueue = 4

// hashJob is one batch: row r belongs to sums[rowKey[r]], or every row to
// sums[0] when rowKey is nil; a nil sum skips its rows.
type hashJob struct {
	rec    arrow.RecordBatch // retained; released once hashed
	sums   []*fingerprint.Sum
	rowKey []int
}

func startHasher() *hasher {
	h := &hasher{jobs: make(chan hashJob, hasherQueue), done: make(chan struct{})}
	go h.run()
	return h
}

// countOnly makes a hasher count rows without hashing them (every row's
// hash zero). Only benchmarks set it, to measure the hashing's share of a
// replace (BenchmarkReplaceFingerprintCost).
var countOnly bool

func (h *hasher) run() {
	defer close(h.done)
	var (
		rows   fingerprint.Hasher
		hashes []fingerprint.Hash
	)
	for j := range h.jobs {
		if countOnly {
			hashes = append(hashes[:0], make([]fingerprint.Hash, j.rec.NumRows())...)
		} else {
			hashes = rows.Hashes(j.rec, hashes)
		}
		for row, hash := range hashes {
			ki := 0
			if j.rowKey != nil {
				ki = j.rowKey[row]
			}
			if s := j.sums[ki]; s != nil {
				s.AddHash(hash)
			}
		}
		j.rec.Release()
	}
}

// add queues rec (retaining it) for sums as described on hashJob.
func (h *hasher) add(rec arrow.RecordBatch, sums []*fingerprint.Sum, rowKey []int) {
	rec.Retain()
	h.jobs <- hashJob{rec: rec, sums: sums, rowKey: rowKey}
}

// wait hashes what is queued and stops the hasher; the sums are final
// once it returns. It must be called exactly once.
func (h *hasher) wait() {
	close(h.jobs)
	<-h.done
}
