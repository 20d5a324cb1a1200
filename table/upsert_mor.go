package table

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/rowdelete"
	"github.com/icerun/icerun/partition"
)

// runMOR is Upsert merge-on-read: each touched partition gets the
// winning input rows as new data files and delete files for the live rows
// of their keys, all in one snapshot. A partition with equality deletes
// makes the whole upsert copy-on-write.
func (u *upsert) runMOR(ctx context.Context, tbl *icetable.Table) (commit.Result, error) {
	res, err := commitDeltas(ctx, u.w, u.op, tbl, u.spec, u.keys(), u.planDelta, u.guard.check)
	if errors.Is(err, rowdelete.ErrEqualityDeletes) {
		return u.run(ctx, tbl)
	}
	return res, err
}

// planDelta plans the upsert's change of partition k on tbl.
func (u *upsert) planDelta(ctx context.Context, tbl *icetable.Table, k partition.Key) (*rowDelta, error) {
	if err := u.plan.check(tbl); err != nil {
		return nil, err
	}
	win, rng, err := u.winners(ctx, tbl, k)
	if err != nil {
		return nil, err
	}
	fp := changeFingerprint(u.plan.kind(), u.keyColumns, win)
	var known *placement
	if u.plan != nil {
		known = u.plan.known
	}
	d, err := locateDelta(ctx, u.w, tbl, u.spec, k, u.keyColumns, win, rng, fp, known)
	if d == nil || err != nil {
		return d, err
	}
	d.st = newStager(ctx, tbl, u.res.Schema(), u.cfg)
	add := d.st.add
	if d.rowIDs != nil {
		d.st.preserveLineage()
		if add, err = u.carryRowIDs(add, d.rowIDs); err != nil {
			return d, err
		}
	}
	var rows int64
	err = u.addChanged(ctx, k, win, func(rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		return add(rec)
	})
	if err != nil {
		return d, err
	}
	if d.delta.Data, err = d.st.finish(); err != nil {
		return d, err
	}
	d.delta.AddedRows = rows
	return d, nil
}
