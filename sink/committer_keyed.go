package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// appendKeyed commits hs in keyed mode ([WithKey]): the rows of their
// change files, read in hs's order, whose key neither the table nor an
// earlier row holds (the first row of a key wins, as in a lone keyed
// sink), written to data files of the committer's own and appended with
// hs's positions in one snapshot. Every attempt checks on its table
// state that no other writer committed one of the kept keys since they
// were read (else [ErrKeyCommitted]: the round is planned again, and the
// keys read again). Files of a failed round are removed, except after an
// unknown outcome (they may have landed: the next round finds out by the
// positions).
func (c *Committer) appendKeyed(ctx context.Context, hs []*HandOver, spent int) (res commit.Result, err error) {
	s := c.s
	chg, err := c.readChanges(ctx, hs)
	if err != nil {
		return commit.Result{}, err
	}
	defer chg.release()
	s.keys.resetPending()
	defer func() {
		if err != nil {
			s.keys.resetPending()
			s.keys.forget() // the table may hold keys it did not read: read again
		}
	}()
	var (
		stream *fileStream
		dups   int64
	)
	for _, rec := range chg.recs {
		kept, n, err := c.newKeys(ctx, rec)
		dups += n
		if err != nil {
			return commit.Result{}, errors.Join(err, abortStream(ctx, stream))
		}
		if kept == nil {
			continue
		}
		if stream == nil {
			tbl, err := writerTable(s.tbl)
			if err != nil {
				kept.Release()
				return commit.Result{}, err
			}
			stream = startFiles(ctx, tbl, kept.Schema(), &s.cfg)
		}
		if err := stream.add(ctx, kept); err != nil {
			return commit.Result{}, errors.Join(err, abortStream(ctx, stream))
		}
	}
	var files []iceberg.DataFile
	if stream != nil {
		if files, err = stream.finish(context.WithoutCancel(ctx)); err != nil {
			return commit.Result{}, fmt.Errorf("write: %w", err)
		}
	}
	res, err = c.append(ctx, hs, files, spent, func(tbl *icetable.Table) error { return s.keys.checkCommitted(ctx, s, tbl) })
	if err != nil {
		var unknown *commit.UnknownOutcomeError
		if !errors.As(err, &unknown) {
			err = errors.Join(err, removeFiles(context.WithoutCancel(ctx), s.tbl, files))
		}
		return res, err
	}
	s.keys.commitPending(s, files, res.SnapshotID)
	c.stats.DuplicateKeys += dups
	return res, nil
}

// newKeys returns the rows of rec whose key is new (nil: none) and the
// number of rows it dropped.
func (c *Committer) newKeys(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, int64, error) {
	s := c.s
	rk, err := s.keys.rows(ctx, s, rec)
	if err != nil {
		return nil, 0, err
	}
	var idx []int
	for i := range int(rec.NumRows()) {
		if s.keys.admit(rk, i) {
			idx = append(idx, i)
		}
	}
	dropped := rec.NumRows() - int64(len(idx))
	if len(idx) == 0 {
		return nil, dropped, nil
	}
	kept, err := take(ctx, rec, idx)
	return kept, dropped, err
}

// abortStream aborts stream (nil: none), removing its files.
func abortStream(ctx context.Context, stream *fileStream) error {
	if stream == nil {
		return nil
	}
	return stream.abort(context.WithoutCancel(ctx))
}
