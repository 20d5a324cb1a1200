package table

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icerun/icerun/internal/fingerprint"
)

// hasher adds input batches to the partitions' fingerprints on a
// goroutine of its own, beside the encoders: nothing needs a fingerprint
// before the commit. Each partition's fingerprint receives its rows in
// input order, however the rows of partitions interleave (a dynamic
// replace), so a static and a dynamic replace of the same rows of a
// partition, in the same order, record the same fingerprint. Batches queue (at most hasherQueue)
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

// countOnly makes a hasher count rows without hashing them. Only benchmarks set it, to measure the hashing's share of a
// replace (BenchmarkReplaceFingerprintCost).
var countOnly bool

func (h *hasher) run() {
	defer close(h.done)
	var rows fingerprint.Hasher
	for j := range h.jobs {
		if countOnly {
			count(j)
		} else {
			rows.Add(j.rec, j.sums, j.rowKey)
		}
		j.rec.Release()
	}
}

// count adds j's rows to its sums' counts without hashing them.
func count(j hashJob) {
	if j.rowKey == nil {
		if j.sums[0] != nil {
			j.sums[0].Count(j.rec.NumRows())
		}
		return
	}
	for _, ki := range j.rowKey {
		if s := j.sums[ki]; s != nil {
			s.Count(1)
		}
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
