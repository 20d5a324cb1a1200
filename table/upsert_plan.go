package table

import (
	"context"
	"errors"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
)

// errDecidedOnOldState says that the table moved since a changelog write
// compared its input with the stored rows: the comparison is made again
// on the new state (changelog.go).
var errDecidedOnOldState = errors.New("the table changed since the input was compared with its rows")

// changePlan is what a changelog write decided on one table state: for
// each partition it touches, the keys whose live rows it deletes, each
// with the hash of the input row that replaces it in that partition (the
// zero hash: none). The copy-on-write and merge-on-read machinery of
// Upsert carry it out as they carry out an upsert's winners.
type changePlan struct {
	snapshot int64 // the snapshot the decisions were made on
	parts    []partition.Key
	win      map[partition.Key]map[string]fingerprint.Hash
	rng      *keyRange  // the first key column's values of every input key
	known    *placement // where the stored rows of the input keys are, on snapshot
}

// check fails with errDecidedOnOldState when tbl is not the state p was
// decided on; a nil plan (a plain upsert) passes.
func (p *changePlan) check(tbl *icetable.Table) error {
	if p == nil || snapshotID(tbl) == p.snapshot {
		return nil
	}
	return errDecidedOnOldState
}

// kind names the change in its merge-on-read fingerprint.
func (p *changePlan) kind() string {
	if p == nil {
		return "mor-upsert"
	}
	return "changelog"
}

// keys are the partitions the upsert touches.
func (u *upsert) keys() []partition.Key {
	if u.plan != nil {
		return u.plan.parts
	}
	return u.chg.keys()
}

// winners are the rows partition k gets, by encoded key (see
// changes.winners), and the first key column's values of the keys. With
// WithUpsertNewerOnly the keys whose stored order is not below the
// input's are left out, and counted.
func (u *upsert) winners(ctx context.Context, tbl *icetable.Table, k partition.Key) (map[string]fingerprint.Hash, *keyRange, error) {
	if u.plan != nil {
		return u.plan.win[k], u.plan.rng, nil
	}
	rng := newKeyRange(u.keyColumns)
	win, err := u.chg.resolve(ctx, k, rng)
	if err != nil {
		return nil, nil, err
	}
	out := make(map[string]fingerprint.Hash, len(win))
	var stale int64
	for key, w := range win {
		if s, ok := u.stored[key]; ok && w.ord.compare(s) <= 0 {
			stale++
			continue
		}
		out[key] = w.hash
	}
	if u.stored != nil {
		u.stale[k] = stale
	}
	return out, rng, nil
}
