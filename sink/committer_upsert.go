package sink

import (
	"context"
	"errors"
	"log/slog"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/table"
)

// unreadableError is the error of a round whose hand-overs name change
// files the committer cannot read: bad are dropped and the round is
// planned again.
type unreadableError struct {
	bad []*HandOver
	err error
}

func (e *unreadableError) Error() string { return e.err.Error() }
func (e *unreadableError) Unwrap() error { return e.err }

// applyChanges commits take in upsert mode ([WithUpsert]): the rows of
// their change files, read in take's order (so each source partition's
// rows in offset order), as one [table.Writer.ApplyChanges] call whose
// snapshot records the positions take's ranges chain to, checked on the
// table state every attempt commits on (else errRangesMoved). The change
// compares with the table the attempt lands on, so the members never
// read the table: what they hand over is the rows, not a delete computed
// on a state the commit may no longer have. When the change leaves the
// table as it was (every row stale), the positions are committed alone,
// on the state the change compared against or a descendant of it.
func (c *Committer) applyChanges(ctx context.Context, take []*HandOver) (commit.Result, error) {
	s := c.s
	var rows int64
	for _, h := range take {
		rows += h.Rows
	}
	chg, err := c.readChanges(ctx, take)
	if err != nil {
		return commit.Result{}, err
	}
	defer chg.release()
	var merged marks
	positions := func(tbl *icetable.Table) (marks, error) { return chained(tbl, take) }
	var (
		res commit.Result
		cr  table.ChangeResult
	)
	if len(chg.recs) == 0 { // every row of take went to a side table
		res, merged, err = s.commitPositionsOf(ctx, nil, positions, rows)
	} else {
		stampCtx := snapshotcommit.WithStamp(ctx, s.ident, func(tbl *icetable.Table) (iceberg.Properties, iceberg.Properties, error) {
			m, err := positions(tbl)
			if err != nil {
				return nil, nil, err
			}
			merged = m
			return s.positionStampOf(tbl, m, rows)
		})
		pol, perr := s.cfg.policy.WithDefaults()
		if perr != nil {
			return commit.Result{}, perr
		}
		w, werr := s.writer(ctx)
		if werr != nil {
			return commit.Result{}, werr
		}
		for attempt := 1; ; attempt++ {
			rdr, rerr := chg.reader()
			if rerr != nil {
				return commit.Result{}, rerr
			}
			cr, err = w.ApplyChanges(stampCtx, rdr, *s.cfg.upsert)
			rdr.Release()
			res = cr.Result
			if err == nil && res.Unchanged {
				res, merged, err = s.commitPositionsOf(ctx, w.Table(), positions, rows)
				if errors.Is(err, errMovedSinceChange) && attempt < pol.Attempts {
					continue
				}
			}
			break
		}
	}
	if err != nil {
		return res, err
	}
	c.count(take, rows)
	s.cfg.log.Info("sink committer upsert commit", slog.String("table", s.name), slog.Int64("snapshot", res.SnapshotID),
		slog.Int("hand_overs", len(take)), slog.Int64("rows", rows), slog.Int64("upserted", cr.Upserted),
		slog.Int64("deleted", cr.Deleted), slog.Int64("stale", cr.Stale), slog.Int64("late", cr.LateRows),
		slog.Int("attempts", res.Attempts))
	if merged == nil { // found by its token after an unknown outcome
		if err := s.load(ctx); err != nil {
			return res, err
		}
	} else if m, err := tableMarks(s.tbl); err == nil {
		s.committed = m
	}
	s.noteChanged(res.Partitions)
	s.maintain(ctx, nil)
	return res, nil
}

// readChanges reads the change files of take, hand-over after hand-over.
// Hand-overs whose files cannot be read fail it with an *unreadableError.
func (c *Committer) readChanges(ctx context.Context, take []*HandOver) (*changeRows, error) {
	fsys, err := c.s.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	chg := &changeRows{}
	var bad []*HandOver
	var errs []error
	for _, h := range take {
		for _, f := range h.Changes {
			t, err := readChangeFile(ctx, fsys, f)
			if err == nil {
				err = chg.add(t, f.Path)
			}
			if errors.Is(err, errChangeFile) {
				bad, errs = append(bad, h), append(errs, err)
				break
			}
			if err != nil {
				chg.release()
				return nil, err
			}
		}
	}
	if len(bad) > 0 {
		chg.release()
		return nil, &unreadableError{bad: bad, err: errors.Join(errs...)}
	}
	return chg, nil
}

// removeChanges removes the change files of hs, landed or dropped: none
// of them can land again (see [Committer]). A failure is logged: the
// files are orphans for cleanup.
func (c *Committer) removeChanges(ctx context.Context, hs []*HandOver) {
	var files []ChangeFile
	for _, h := range hs {
		files = append(files, h.Changes...)
	}
	if err := removeChangeFiles(ctx, c.s.tbl, files); err != nil {
		c.s.cfg.log.Warn("sink committer: change files not removed", slog.String("table", c.s.name), slog.Any("error", err))
	}
}
