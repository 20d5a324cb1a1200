package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// Commit publishes the pending rows in one snapshot that also records their
// positions (see [SummaryPositions]). Late rows and dead letters are
// committed to their side tables first (Iceberg commits one table at a
// time), each side table recording the positions it holds, so that a
// crash between the commits only replays rows the side table then drops:
// every row lands exactly once in the table it belongs to. With nothing pending it commits nothing and
// returns the zero Result.
//
// While the sink expires snapshots (the default, [WithSnapshotExpiry]),
// its commit also sets write.metadata.delete-after-commit.enabled=true and
// write.metadata.previous-versions-max (the snapshots kept, at least 10)
// on a table that sets neither, so that every commit deletes the
// metadata.json files that fall out of the metadata log instead of
// leaving one per commit.
//
// The snapshot expiry and the compactions that follow a commit never fail
// it: see [Stats].MaintenanceFailures.
//
// On error nothing of the pending batch is in the table (except after a
// *commit.UnknownOutcomeError, when it may be: the table decides) and the
// batch is dropped: call [Sink.Start] and resume the source from the
// positions it returns.
func (s *Sink) Commit(ctx context.Context) (res commit.Result, err error) {
	if s.closed {
		return commit.Result{}, ErrClosed
	}
	if s.fleet != nil {
		return commit.Result{}, fmt.Errorf("%w: %s: member %s", ErrMember, s.name, s.fleet.id)
	}
	if len(s.pending) == 0 {
		return commit.Result{}, nil
	}
	start := time.Now()
	s.commitStarted(start)
	defer func() { s.commitEnded(ctx, start, err) }()
	if err := s.commitSides(ctx); err != nil {
		return commit.Result{}, err
	}
	if s.cfg.upsert != nil {
		return s.commitChanges(ctx)
	}
	var files []iceberg.DataFile
	if s.files != nil {
		f, err := s.files.finish(context.WithoutCancel(ctx))
		s.files = nil
		if err != nil {
			s.reset()
			return commit.Result{}, fmt.Errorf("sink: %s: write: %w", s.name, err)
		}
		files = f
	}
	var (
		merged  marks
		planned *icetable.Table // the state the last attempt planned on
		base    *icetable.Table
	)
	if s.planOnLast {
		base = s.tbl
	}
	lastSnap := snapshotID(s.tbl)
	token := uuid.NewString()
	res, err = snapshotcommit.Append(ctx, s.cat, snapshotcommit.AppendRequest{
		Target: snapshotcommit.Target{
			Op:        "sink: append " + s.name,
			Ident:     s.ident,
			TableUUID: s.tbl.Metadata().TableUUID().String(),
			Spec:      s.spec,
			SchemaID:  s.tbl.Schema().ID,
			Token:     token,
			Policy:    s.cfg.policy,
			Lock:      s.cfg.lock,
			Base:      base,
			Committed: func(tbl *icetable.Table) { s.tbl = tbl },
		},
		Files: files,
		Summary: func(tbl *icetable.Table) (iceberg.Properties, error) {
			planned = tbl
			m, err := s.positions(tbl)
			if err != nil {
				return nil, err
			}
			if s.keys != nil {
				if err := s.keys.checkCommitted(ctx, s, tbl); err != nil {
					return nil, err
				}
			}
			merged = m
			return s.summaryProps(m, files)
		},
		TableProperties: func(tbl *icetable.Table) (iceberg.Properties, error) {
			v, err := merged.encode()
			props := positionProps(tbl.Metadata(), v)
			s.metadataPruning(tbl.Metadata(), props)
			return props, err
		},
	})
	s.planOnLast = err == nil && res.Attempts == 1 && planned != nil && snapshotID(planned) == lastSnap
	if err != nil {
		var unknown *commit.UnknownOutcomeError
		if !errors.As(err, &unknown) {
			err = errors.Join(s.schemaMoved(ctx, err), removeFiles(context.WithoutCancel(ctx), s.tbl, files))
		}
		if errors.Is(err, ErrFenced) || errors.Is(err, ErrKeyCommitted) {
			s.stats.Fenced++
		}
		s.meters.add(ctx, s.stats)
		s.cfg.log.Warn("sink commit failed", slog.String("table", s.name), slog.Int64("rows", s.rows), slog.Any("error", err))
		s.reset()
		if s.keys != nil {
			s.keys.forget() // the table may hold keys we did not commit: read again
		}
		return res, err
	}
	if merged == nil { // found by its token after an unknown outcome: read what landed
		if err := s.refresh(ctx, s.pending); err != nil { // the pending source partitions landed: they take the table's marks
			return res, err
		}
		merged = s.committed
		if s.keys != nil {
			s.keys.forget()
		}
	}
	s.committed = s.committed.after(merged, s.pending)
	s.stats.Appended += s.rows
	s.stats.Commits++
	s.meters.add(ctx, s.stats)
	s.cfg.log.Info("sink commit", slog.String("table", s.name), slog.Int64("snapshot", res.SnapshotID),
		slog.Int64("rows", s.rows), slog.Int("files", len(files)), slog.Int("attempts", res.Attempts),
		slog.Int("source_partitions", len(s.pending)), slog.Int64("dead_letters_total", s.stats.DeadLetters))
	if s.keys != nil {
		s.keys.commitPending(s, files, res.SnapshotID)
	}
	s.reset()
	s.maintain(ctx, files)
	return res, nil
}

// commitSides commits the pending rows of the side tables (late rows,
// dead letters), each in a snapshot of its own that records the side
// table's positions and is fenced by them like any sink's commit. A lone
// sink calls it before it commits the main table, a member ([WithHandOver])
// before it hands the main table's files over: the main table's positions
// never cover a late row or a dead letter its side table lacks, and a
// replay of rows the side table holds is dropped there as a redelivery.
// On error the whole pending batch (main table and side tables) is
// dropped and its files removed (but those of a side commit whose outcome
// is unknown: the side table's positions tell whether it landed): the
// caller resumes from [Sink.Start].
func (s *Sink) commitSides(ctx context.Context) error {
	for _, side := range s.sides() {
		if len(side.pending) == 0 {
			continue
		}
		if _, err := side.Commit(ctx); err != nil {
			return errors.Join(fmt.Errorf("sink: %s: side table %s: %w", s.name, side.name, err), s.discard(ctx))
		}
	}
	return nil
}

// maintain runs what follows a commit that landed: the snapshot expiry
// when it is due, the compaction of the partitions the watermark
// closed, and that of the partitions holding enough small files
// ([WithSmallFileCompaction]). Their failures are logged and counted
// ([Stats].MaintenanceFailures), never returned: the commit's result says
// whether its rows landed, and a caller answering its source from that
// error would have rows that are stored sent again. What failed is tried
// again after a later commit.
func (s *Sink) maintain(ctx context.Context, files []iceberg.DataFile) {
	if s.held != nil { // an Ingester's: run after its callers are answered
		s.held.files, s.held.due = append(s.held.files, files...), true
		return
	}
	failed := func(what string, err error) {
		s.stats.MaintenanceFailures++
		s.meters.add(ctx, s.stats)
		s.cfg.log.Warn("sink "+what+" failed after a commit (its rows landed; tried again later)",
			slog.String("table", s.name), slog.Any("error", err))
	}
	if err := s.expire(ctx); err != nil {
		failed("snapshot expiry", err)
	}
	if s.clock != nil && !s.isSide {
		s.noteOpen(files)
		if err := s.compactClosed(ctx); err != nil {
			failed("compaction", err)
		}
	}
	if !s.isSide {
		s.noteSmall(files)
		if err := s.compactSmall(ctx); err != nil {
			failed("compaction", err)
		}
	}
	if !s.isSide && s.cfg.upsert != nil {
		if err := s.compactChanged(ctx); err != nil {
			failed("compaction", err)
		}
	}
}

// snapshotID is the id of tbl's current snapshot (0: none).
func snapshotID(tbl *icetable.Table) int64 {
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return 0
}
