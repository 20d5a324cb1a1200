package table

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
)

// sameContent decides, while a partition is merged, whether the merge
// leaves its content as it is: whether the rows the merge drops (the
// partition's rows of the change set's keys) are exactly the change set's
// winners, one row per key, equal by their 256-bit row hash. Then the
// merged rows are the partition's rows, in another order perhaps, and
// the merge records the partition's fingerprint again (see
// recordedFingerprint), so that a replayed Upsert is Unchanged however
// the partition's files order its rows; a fingerprint hashes rows in
// order, and the merge emits them in the order its files are read.
//
// The decision compares rows, not fingerprints: a change set is taken for
// the partition's content only if each of its rows has the SHA-256 of the
// row it replaces (a collision: about 2^128 work).
type sameContent struct {
	win     map[string]fingerprint.Hash
	seen    map[string]bool
	differs bool
	rows    fingerprint.Hasher
	hashes  []fingerprint.Hash
	hashed  bool // hashes holds the current batch's
}

func newSameContent(win map[string]fingerprint.Hash) *sameContent {
	return &sameContent{win: win, seen: make(map[string]bool, len(win))}
}

// batch starts the next batch of the partition's rows.
func (c *sameContent) batch() { c.hashed = false }

// drop notes that the merge drops row of rec, the current batch, whose
// key is key (one of the change set's).
func (c *sameContent) drop(rec arrow.RecordBatch, row int, key string) {
	if c.differs {
		return
	}
	if !c.hashed {
		c.hashes, c.hashed = c.rows.Hashes(rec, c.hashes), true
	}
	if c.seen[key] || c.hashes[row] != c.win[key] {
		c.differs = true
		return
	}
	c.seen[key] = true
}

// same reports whether the merge leaves the partition's content as it is.
func (c *sameContent) same() bool { return !c.differs && len(c.seen) == len(c.win) }

// recordedFingerprint is the fingerprint recorded for partition k by the
// last write tbl knows of, if it is of the current format.
func recordedFingerprint(tbl *icetable.Table, k partition.Key) (string, bool) {
	w, ok := LastWrites(tbl, []string{k.String()})[k.String()]
	if !ok || !strings.HasPrefix(w.Fingerprint, fingerprint.Version+"-") {
		return "", false
	}
	return w.Fingerprint, true
}
