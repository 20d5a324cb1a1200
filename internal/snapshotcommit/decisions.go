package snapshotcommit

import (
	"context"
	"errors"
	"io/fs"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// decisions are the older-spec decisions of one [Replace] call, by file
// and the delete files that apply to it (taskID), kept across attempts so that a file is read (and rewritten) once
// per call. The rewrites belong to the call: those the table does not
// reference when the call ends are removed by removeUnused.
type decisions struct {
	byTask map[string]Decision
	// inAttempt are the replacement files the latest attempt adds.
	inAttempt map[string]bool
}

func newDecisions() *decisions {
	return &decisions{byTask: make(map[string]Decision)}
}

// begin starts an attempt: it adds no replacement yet.
func (d *decisions) begin() { d.inAttempt = make(map[string]bool) }

// decide returns the decision for t's file, asking fn the first time, and
// records its replacements as added by this attempt when the file is
// deleted.
func (d *decisions) decide(ctx context.Context, tbl *icetable.Table, t icetable.FileScanTask, fn OldSpecFunc) (Decision, error) {
	id := taskID(t)
	dec, ok := d.byTask[id]
	if !ok {
		var err error
		if dec, err = fn(ctx, tbl, t); err != nil {
			return Decision{}, err
		}
		d.byTask[id] = dec
	}
	if dec.Delete {
		for _, r := range dec.Replacement {
			d.inAttempt[r.FilePath()] = true
		}
	}
	return dec, nil
}

// removeUnused removes every replacement file of the call except those of
// the latest attempt when keepLatest (its commit landed, or may have): a
// rewrite made by an attempt that lost a race, or by a call that failed or
// found the partitions unchanged, is referenced by no table state. Best
// effort: what cannot be removed is left to an orphan cleanup.
func (d *decisions) removeUnused(ctx context.Context, tbl *icetable.Table, keepLatest bool) error {
	if tbl == nil || len(d.byTask) == 0 {
		return nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, dec := range d.byTask {
		for _, r := range dec.Replacement {
			if keepLatest && d.inAttempt[r.FilePath()] {
				continue
			}
			if err := fsys.Remove(r.FilePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// release ends a call that owns d: it removes the rewrites the table does
// not reference, given the call's outcome err and the latest table state
// loaded (keeping the latest attempt's when its commit landed, or may
// have). Best effort: a rewrite left behind is for the orphan cleanup.
func (d *decisions) release(ctx context.Context, last *icetable.Table, err error) {
	var unknown *commit.UnknownOutcomeError
	_ = d.removeUnused(context.WithoutCancel(ctx), last, err == nil || errors.As(err, &unknown))
}
