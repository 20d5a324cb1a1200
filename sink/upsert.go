package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/table"
)

// WithUpsert makes the sink keep the latest state of each key instead of
// appending (default: off, the sink appends): each commit applies the
// pending rows as one [table.Writer.ApplyChanges] call with cs, whose
// snapshot of the table also records the source positions
// ([SummaryPositions]), with the same fence as an append (a table whose
// positions moved past the sink's fails the commit with [ErrFenced]). So
// exactly-once holds as in the append path: a redelivered row is dropped
// by its position before it reaches the change, and a crash at any
// instant leaves either the change and its positions or neither (the
// tombstones, committed first to their own table, are never lowered and
// make a replay of the same rows a no-op). A commit whose rows are all
// stale records its positions alone, in a snapshot of no files, on the
// table the change compared against or a descendant of it: a rollback of
// main in between makes the sink compare the rows again.
//
// The order: for each key the greatest cs.Order wins among the pending
// rows, the row the table holds and the key's tombstone, and the source
// offset is the last tie-breaker. Among the rows of one commit, rows of
// equal order of one key go to the change in the order the sink received
// them (increasing offsets within a source partition), and the last one
// wins. Across commits a pending row whose order equals the stored row's
// or tombstone's wins ([table.InputWinsTies], set whatever cs.Ties says):
// a redelivery at or below the committed position is dropped before the
// change, so a row that reaches it came later in the source. (Across
// source partitions "later" is the order of the commits.)
//
// Rows past cs.Retention for a key the table does not know go to the
// late table ([table.LateTable]); late rows by event time
// ([WithEventTime]) and dead letters ([WithDeadLetter]) are routed as in
// the append path before the change. The pending rows are held in memory
// until the commit (bounded by [WithCommitRows] and [WithCommitBytes]);
// [Stats].Appended counts the rows each commit handed to the change,
// stale ones included.
//
// [Open] fails with [ErrBadOption] for a cs without key or order
// columns, beside [WithKey] (the keyed mode keeps the first row of a
// key, upsert the latest), or for a cs the table refuses
// ([table.ChangeSpec.Check]: a column the table does not have, a
// Retention on a first order column that is not a timestamp or date);
// the error then also matches [table.ErrBadChangeSpec].
func WithUpsert(cs table.ChangeSpec) Option {
	return func(c *config) error {
		if len(cs.Key) == 0 || len(cs.Order) == 0 {
			return fmt.Errorf("%w: upsert mode needs key and order columns, got key %q, order %q", ErrBadOption, cs.Key, cs.Order)
		}
		cs.Key, cs.Order = slices.Clone(cs.Key), slices.Clone(cs.Order)
		cs.Ties = table.InputWinsTies // a row that reaches the change is past the committed positions
		c.upsert = &cs
		return nil
	}
}

// checkUpsert validates the upsert mode of cfg against tbl: the change
// spec by the table's own check ([table.ChangeSpec.Check]), and not
// beside the keyed mode.
func checkUpsert(tbl *icetable.Table, name string, cfg config) error {
	if len(cfg.key) > 0 {
		return fmt.Errorf("%w: %s: upsert mode and keyed mode (WithKey) together: keyed mode keeps a key's first row, upsert its latest", ErrBadOption, name)
	}
	if err := cfg.upsert.Check(tbl); err != nil {
		return fmt.Errorf("%w: %s: upsert mode: %w", ErrBadOption, name, err)
	}
	return nil
}

// commitChanges is [Sink.Commit] in upsert mode, once the side tables
// are committed: one changelog write of the pending rows, its snapshot
// stamped with the positions on every attempt. When the change leaves
// the table as it is (every row stale, or only tombstones written), the
// positions are committed by an append of no files.
func (s *Sink) commitChanges(ctx context.Context) (commit.Result, error) {
	defer s.reset()
	rows := s.rows
	w, err := s.writer(ctx)
	if err != nil {
		return commit.Result{}, err
	}
	if len(s.changes) == 0 { // every pending row went to a side table
		res, merged, err := s.commitPositions(ctx, nil)
		if err == nil {
			if merged == nil { // found by its token after an unknown outcome
				landed := s.pending
				s.reset()
				err = s.refresh(ctx, landed)
			} else {
				s.committed = s.committed.after(merged, s.pending)
			}
			s.stats.Commits++
		}
		return res, err
	}
	var merged marks
	stampCtx := snapshotcommit.WithStamp(ctx, s.ident, func(tbl *icetable.Table) (iceberg.Properties, iceberg.Properties, error) {
		m, err := s.positions(tbl)
		if err != nil {
			return nil, nil, err
		}
		merged = m
		return s.positionStamp(tbl, m)
	})
	policy, err := s.cfg.policy.WithDefaults()
	if err != nil {
		return commit.Result{}, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	var cr table.ChangeResult
	var res commit.Result
	for attempt := 1; ; attempt++ {
		rdr, err2 := s.changeReader()
		if err2 != nil {
			return commit.Result{}, fmt.Errorf("sink: %s: %w", s.name, err2)
		}
		cr, err = w.ApplyChanges(stampCtx, rdr, *s.cfg.upsert)
		rdr.Release()
		res = cr.Result
		if err == nil && res.Unchanged {
			// The change left the table as it was on the state it
			// compared against: commit the positions on that state or
			// a descendant of it only. A table rolled back since (which
			// may have taken away the rows the changes were stale
			// against) is compared again.
			res, merged, err = s.commitPositions(ctx, w.Table())
			if errors.Is(err, errMovedSinceChange) && attempt < policy.Attempts {
				continue
			}
		}
		break
	}
	s.planOnLast = false
	if err != nil {
		if errors.Is(err, ErrFenced) {
			s.stats.Fenced++
		}
		s.meters.add(ctx, s.stats)
		s.cfg.log.Warn("sink commit failed", slog.String("table", s.name), slog.Int64("rows", rows), slog.Any("error", err))
		return res, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if merged == nil { // found by its token after an unknown outcome: read what landed
		landed := s.pending
		s.reset() // the pending marks are committed: no longer the fence
		if err := s.refresh(ctx, landed); err != nil {
			return res, err
		}
		merged = s.committed
	} else if tbl := w.Table(); tbl != nil && snapshotID(tbl) == res.SnapshotID {
		s.tbl = tbl
	} else if err := s.refresh(ctx, nil); err != nil {
		return res, err
	}
	s.committed = s.committed.after(merged, s.pending)
	s.stats.Appended += rows
	s.stats.Commits++
	s.meters.add(ctx, s.stats)
	s.cfg.log.Info("sink upsert commit", slog.String("table", s.name), slog.Int64("snapshot", res.SnapshotID),
		slog.Int64("rows", rows), slog.Int64("upserted", cr.Upserted), slog.Int64("deleted", cr.Deleted),
		slog.Int64("stale", cr.Stale), slog.Int64("late", cr.LateRows), slog.Int("attempts", res.Attempts))
	s.noteChanged(res.Partitions)
	s.maintain(ctx, nil)
	return res, nil
}

// positionStamp is what a sink commit on tbl holding merged adds: the
// positions in the summary and the table properties.
func (s *Sink) positionStamp(tbl *icetable.Table, merged marks) (iceberg.Properties, iceberg.Properties, error) {
	return s.positionStampOf(tbl, merged, s.rows)
}

// positionStampOf is positionStamp for rows source rows (a committer's
// change of many hand-overs).
func (s *Sink) positionStampOf(tbl *icetable.Table, merged marks, rows int64) (iceberg.Properties, iceberg.Properties, error) {
	v, err := merged.encode()
	if err != nil {
		return nil, nil, err
	}
	sum := iceberg.Properties{SummaryPositions: v, "icerun.sink.source-rows": fmt.Sprint(rows)}
	if len(s.skipped) > 0 {
		sum[SummarySkipped] = skipsText(s.skipped)
	}
	props := positionProps(tbl.Metadata(), v)
	s.metadataPruning(tbl.Metadata(), props)
	return sum, props, nil
}

// errMovedSinceChange fails a positions commit on a table that does not
// descend from the one the change compared against: a conflict (nothing
// committed).
var errMovedSinceChange = fmt.Errorf("%w: main no longer descends from the state the change was compared with", commit.ErrConflict)

// descends reports whether main's snapshot of tbl is snapshot id (0: no
// snapshot) or one of its descendants.
func descends(tbl *icetable.Table, id int64) bool {
	for s := tbl.CurrentSnapshot(); s != nil && id != 0; {
		if s.SnapshotID == id {
			return true
		}
		if s.ParentSnapshotID == nil {
			return false
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
	return id == 0
}

// commitPositions commits the pending positions alone: an append of no
// files, for a change that left the table's rows as they were on
// compared (nil: no change was compared), from which every attempt
// requires the table to descend (else [errMovedSinceChange]: a rollback
// of main). It returns the positions committed (nil when the commit was
// found by its token after an unknown outcome).
func (s *Sink) commitPositions(ctx context.Context, compared *icetable.Table) (commit.Result, marks, error) {
	return s.commitPositionsOf(ctx, compared, s.positions, s.rows)
}

// commitPositionsOf is commitPositions of the positions that positions
// merges into those of the table an attempt lands on, for rows source
// rows.
func (s *Sink) commitPositionsOf(ctx context.Context, compared *icetable.Table, positions func(*icetable.Table) (marks, error), rows int64) (commit.Result, marks, error) {
	tbl, err := snapshotcommit.Load(ctx, s.cat, s.ident)
	if err != nil {
		return commit.Result{}, nil, err
	}
	var merged marks
	res, err := snapshotcommit.Append(ctx, s.cat, snapshotcommit.AppendRequest{
		Target: snapshotcommit.Target{
			Op:        "sink: positions of " + s.name,
			Ident:     s.ident,
			TableUUID: tbl.Metadata().TableUUID().String(),
			Spec:      s.spec,
			SchemaID:  tbl.Schema().ID,
			Token:     uuid.NewString(),
			Policy:    s.cfg.policy,
			Lock:      s.cfg.lock,
			Base:      tbl,
			Committed: func(t *icetable.Table) { s.tbl = t },
		},
		Summary: func(tbl *icetable.Table) (iceberg.Properties, error) {
			if compared != nil && !descends(tbl, snapshotID(compared)) {
				return nil, errMovedSinceChange
			}
			m, err := positions(tbl)
			if err != nil {
				return nil, err
			}
			merged = m
			return s.appendSummary(m, nil, rows)
		},
		TableProperties: func(tbl *icetable.Table) (iceberg.Properties, error) {
			_, props, err := s.positionStampOf(tbl, merged, rows)
			return props, err
		},
	})
	return res, merged, err
}

// changeReader reads the pending rows, in the order they were written.
func (s *Sink) changeReader() (array.RecordReader, error) {
	sc := s.changes[0].Schema()
	for _, r := range s.changes[1:] {
		if !r.Schema().Equal(sc) {
			return nil, fmt.Errorf("%w: the pending rows have two schemas; commit before the schema changes", ErrBadInput)
		}
	}
	return array.NewRecordReader(sc, s.changes)
}

// releaseChanges releases the pending rows of upsert mode.
func (s *Sink) releaseChanges() {
	for _, r := range s.changes {
		r.Release()
	}
	s.changes = nil
}
