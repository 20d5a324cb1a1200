package fingerprint

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Hash is the hash of one row: SHA-256 of its canonical bytes, in full,
// so that two different rows share one only by a SHA-256 collision
// (about 2^128 work).
type Hash [32]byte

// Hasher lays out batches as canonical rows and hashes them: row by row
// (Hashes) or appended to fingerprints (Add). It reuses its buffers from
// batch to batch. The zero value is ready to use. A Hasher is not safe for
// concurrent use.
type Hasher struct {
	layout  layout
	rows    rowHasher
	types   []byte
	sources []source // Add's batch, column by column
	scratch scratch
	order   []int // rows grouped by fingerprint (Add)
	first   []int // where each fingerprint's rows start in order, and their end
	next    []int // group's cursor
}

// Hashes returns one hash per row of rec, reusing buf's storage.
func (h *Hasher) Hashes(rec arrow.RecordBatch, buf []Hash) []Hash {
	n := int(rec.NumRows())
	if cap(buf) < n {
		buf = make([]Hash, n)
	}
	buf = buf[:n]
	h.layout.build(rec)
	for i := range buf {
		buf[i] = h.rows.row(&h.layout, i)
	}
	return buf
}

// Add appends every row of rec, in order, to its fingerprint: row r to
// sums[rowKey[r]], or every row to sums[0] when rowKey is nil. Rows whose
// fingerprint is nil are skipped. Each fingerprint receives its rows in
// their input order however they interleave with other fingerprints'
// rows, so the result does not depend on how rows are split into batches
// or spread across fingerprints.
//
// A fingerprint whose rows in rec are one run of rows (every row, or the
// rows of one partition when the input comes partition after partition)
// hashes their values in place; other fingerprints gather their rows.
func (h *Hasher) Add(rec arrow.RecordBatch, sums []*Sum, rowKey []int) {
	n := int(rec.NumRows())
	if n == 0 {
		return
	}
	h.types = appendTypes(h.types[:0], rec.Schema())
	h.sources = h.sources[:0]
	for _, a := range rec.Columns() {
		h.sources = append(h.sources, newSource(a))
	}
	if rowKey == nil {
		if sums[0] != nil {
			h.add(sums[0], rows{lo: 0, hi: n})
		}
		return
	}
	h.group(rowKey, len(sums))
	for k, s := range sums {
		lo, hi := h.first[k], h.first[k+1]
		if s == nil || lo == hi {
			continue
		}
		sel := rows{list: h.order[lo:hi]}
		if first, last := sel.list[0], sel.list[len(sel.list)-1]; last-first == hi-lo-1 {
			sel = rows{lo: first, hi: last + 1}
		}
		h.add(s, sel)
	}
}

// add appends the rows sel of the batch whose sources h holds to s.
func (h *Hasher) add(s *Sum, sel rows) {
	s.begin(h.types, len(h.sources))
	for c, src := range h.sources {
		src.add(&s.cols[c], sel, s.segment, &h.scratch)
	}
	s.rows += int64(sel.len())
	s.segment += int64(sel.len())
}

// group sets order to the rows grouped by rowKey (a stable counting
// sort: each group keeps its rows' input order), and first[k] to where
// group k starts in it (first[keys] is the row count).
func (h *Hasher) group(rowKey []int, keys int) {
	h.first = resize(h.first, keys+1)
	clear(h.first)
	for _, k := range rowKey {
		h.first[k+1]++
	}
	for k := range keys {
		h.first[k+1] += h.first[k]
	}
	h.order = resize(h.order, len(rowKey))
	h.next = append(h.next[:0], h.first[:keys]...)
	for r, k := range rowKey {
		h.order[h.next[k]] = r
		h.next[k]++
	}
}
