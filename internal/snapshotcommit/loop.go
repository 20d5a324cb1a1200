package snapshotcommit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// operation is what one kind of commit supplies to the [loop], as Java
// Iceberg's SnapshotProducer subclasses supply validate and apply: what
// must still hold of what it read, and what it stages, on the table state
// of one attempt. Neither calls the catalog's CommitTable; the loop does.
//
// base is the table as the loop's branch sees it ([OnBranch]): its current
// snapshot is the branch's head. An operation may keep what validate
// planned for the apply of the same attempt; nothing it keeps from one
// attempt may be taken for true of the next one's base, except what it
// read from immutable files (manifests) and its own decisions.
type operation interface {
	// validate fails when the commit cannot be made on base: what the
	// caller planned from moved (a *BaseMovedError, a
	// *commit.PublishConflictError) or base is not a state the operation
	// can commit on. Its errors end the loop, unless they wrap
	// iceberg-go's ErrCommitFailed: the table moved while validate read
	// it, and the next attempt plans again. It writes nothing.
	validate(ctx context.Context, base *icetable.Table) error
	// apply stages the commit on base: it writes what the commit needs
	// (manifests, a manifest list) and returns the change, or nil when
	// base already holds what the operation would commit (the result is
	// then Unchanged). It fills res with what the change does. On error
	// it leaves nothing written; its errors end the loop as validate's.
	apply(ctx context.Context, base *icetable.Table, res *commit.Result) (*change, error)
}

// change is one attempt's commit, staged and not yet sent.
type change struct {
	reqs     []icetable.Requirement
	updates  []icetable.Update
	snapshot int64    // the snapshot that holds the change once it is committed
	written  []string // the files staged for it (manifests, manifest list): removed when it is not applied
	files    []string // the data files it adds: the caller's, reported by an unknown outcome
	// landed finds the change in a table state after an error whose
	// outcome is unknown; nil looks for the loop's token on its branch.
	landed func(md icetable.Metadata) *icetable.Snapshot
}

// staged is the change of st, a snapshot written by a producer, that adds
// the data files files.
func (st *staged) change(files []string) *change {
	return &change{reqs: st.reqs, updates: st.updates, snapshot: st.snap.SnapshotID, written: st.written, files: files}
}

// loop is the commit loop: the one place where icerun calls a catalog's
// CommitTable. Every commit of every operation (a replacement, a row
// delta, an append, a manifest rewrite, a publish, a branch removal, a
// metadata change) runs through [loop.run], and keeps these invariants:
//
//   - Every attempt plans on a table state loaded from the catalog during
//     the call (Target.Base only on the first attempt and only without a
//     lock), under the lock when there is one, and checks that it is the
//     table, spec and schema the caller wrote for ([Target.sameTable])
//     before the operation validates anything.
//   - Nothing is written before the operation validated the state, and
//     nothing reaches the catalog but the one CommitTable call of an
//     attempt, with the requirements that make the catalog refuse it when
//     the table moved since the state was loaded.
//   - An error before that call ends the loop, and nothing was committed;
//     the operation's own staging is already removed.
//   - A conflict (IsConflict: nothing was applied) removes what the
//     attempt staged and the metadata files that lost with it, while the
//     next attempt runs; the loop backs off and tries again on a fresh
//     load, within Target.Policy, then fails with [commit.ErrConflict].
//   - Any other error of the call may have been applied: the table is
//     reloaded and searched for the change (by Target.Token, or by the
//     change's landed). Found, the call succeeds. Not found on a catalog
//     that answers synchronously, the attempt's files and the metadata
//     file the catalog wrote for it are removed and the error is returned.
//     Unresolvable, the call fails with a *commit.UnknownOutcomeError and
//     removes nothing.
//   - A commit the catalog accepted is followed, for every operation, by
//     the removal of the metadata files that fell out of the log
//     (write.metadata.delete-after-commit) and by Target.Committed with
//     the state it produced; Target.Attempted hears of every attempt that
//     committed or failed.
//
// A loop is used by one call and is not safe for concurrent use.
type loop struct {
	cat    catalog.Catalog
	t      *Target
	branch string // the ref the commits go to; "" is main
	op     operation
	last   *icetable.Table // the latest table state loaded
}

// run is the commit loop under the target's policy: load, validate, stage
// and commit, classify the outcome, back off and retry on conflicts (see
// [loop] and the package documentation). res is the result so far; the
// operation fills it on each attempt.
func (l *loop) run(ctx context.Context, res commit.Result) (commit.Result, error) {
	t := l.t
	pol, err := t.Policy.WithDefaults()
	if err != nil {
		return commit.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, pol.Timeout)
	defer cancel()
	// What a lost attempt leaves (its manifests, the metadata files of
	// the commits that lost with it) is removed while the next attempt
	// runs, not before it: the next attempt starts as soon as its wait
	// ends. The call returns once that cleanup is done.
	var cleanup sync.WaitGroup
	defer cleanup.Wait()

	// stale is 1 once a first attempt planned on t.Base conflicted: the
	// state was old (the caller wrote its files after loading it), which
	// is no lost race. That attempt counts against the budget, but it is
	// retried at once, on a fresh load, and does not lower the priority
	// band (see Policy).
	stale := 0
	budget := max(pol.Attempts, t.Spent+1)
	for attempt := t.Spent + 1; ; attempt++ {
		res.Attempts = attempt
		unlock := func() {}
		if t.Lock != nil {
			u, err := t.Lock.Lock(ctx, t.Ident)
			if err != nil {
				return res, fmt.Errorf("%s: %w", t.Op, err)
			}
			unlock = u
		}
		tbl, err := t.Base, error(nil)
		onBase := attempt == t.Spent+1 && tbl != nil && t.Lock == nil
		if !onBase {
			tbl, err = Load(ctx, l.cat, t.Ident)
		}
		if err != nil {
			unlock()
			if errors.Is(err, catalog.ErrNoSuchTable) {
				return res, fmt.Errorf("%s: %w: %w", t.Op, commit.ErrTableChanged, err)
			}
			return res, fmt.Errorf("%s: load table: %w", t.Op, withCause(ctx, err))
		}
		l.last = tbl
		if err := t.sameTable(tbl); err != nil {
			unlock()
			return res, err
		}
		snap, ch, err := l.attempt(ctx, tbl, &res)
		unlock()
		if t.Attempted != nil && (err != nil || !res.Unchanged) { // an unchanged call committed nothing
			t.Attempted(attempt, err)
		}
		if err == nil {
			res.SnapshotID = snap
			return res, nil
		}
		var nr *noRetryError
		if errors.As(err, &nr) { // failed before reaching the catalog
			return res, fmt.Errorf("%s: %w", t.Op, nr.err)
		}
		var ce *catalogError
		errors.As(err, &ce)
		if ce != nil && errors.Is(err, catalog.ErrNoSuchTable) {
			// The catalog refused the commit: the table was dropped since
			// this attempt loaded it. Nothing was applied.
			rerr := fmt.Errorf("%s: %w: table was dropped: %w", t.Op, commit.ErrTableChanged, err)
			if derr := ce.discard(); derr != nil {
				rerr = fmt.Errorf("%w; %w", rerr, derr)
			}
			return res, rerr
		}
		if !IsConflict(err) {
			now, rerr := l.resolveUnknown(ctx, ch, err, &res)
			var unknown *commit.UnknownOutcomeError
			if rerr != nil && !errors.As(rerr, &unknown) && ce != nil {
				// Not applied: the attempt's manifests are garbage, and so
				// is the metadata file a catalog may have written for it.
				if derr := errors.Join(ce.discard(), removeUnappliedMetadata(context.WithoutCancel(ctx), tbl, now, t.Token)); derr != nil {
					rerr = fmt.Errorf("%w; %w", rerr, derr)
				}
			}
			return res, rerr
		}
		cleanup.Add(1)
		go func(ctx context.Context, lost *icetable.Table) {
			defer cleanup.Done()
			if ce != nil {
				_ = ce.discard() // best effort: the loop goes on; a cleanup removes what is left
			}
			if now, lerr := l.cat.LoadTable(ctx, t.Ident); lerr == nil {
				RemoveLostMetadata(ctx, lost, now)
			}
		}(context.WithoutCancel(ctx), tbl)
		if attempt >= budget {
			return res, fmt.Errorf("%s: %w after %d attempts: %v", t.Op, commit.ErrConflict, attempt, err)
		}
		if onBase {
			stale = 1
			continue
		}
		// The wait bands count the lost races of this round (from the
		// first band again once the caller planned anew).
		timer := time.NewTimer(pol.Backoff(attempt - t.Spent - stale))
		select {
		case <-ctx.Done():
			timer.Stop()
			return res, fmt.Errorf("%s: %w after %d attempts: %w", t.Op, commit.ErrConflict, attempt, context.Cause(ctx))
		case <-timer.C:
		}
	}
}

// attempt validates, stages and commits the operation once on tbl, the
// table as the catalog holds it. It returns the snapshot that holds the
// change (the branch's current one when unchanged) and the change sent.
// Errors raised before the catalog call are noRetry, unless they are a
// conflict; those of the catalog call are *catalogError.
func (l *loop) attempt(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, *change, error) {
	view, err := OnBranch(tbl, l.branch)
	if err != nil {
		return 0, nil, noRetry(err)
	}
	if err := l.op.validate(ctx, view); err != nil {
		return 0, nil, planned(err)
	}
	ch, err := l.op.apply(ctx, view, res)
	if err != nil {
		return 0, nil, planned(err)
	}
	if ch == nil {
		res.Unchanged = true
		if s := view.CurrentSnapshot(); s != nil {
			return s.SnapshotID, nil, nil
		}
		return 0, nil, nil
	}
	md, loc, err := l.cat.CommitTable(ctx, l.t.Ident, ch.reqs, ch.updates)
	if err != nil {
		return 0, ch, &catalogError{err: err, discard: func() error { return removeWritten(context.WithoutCancel(ctx), tbl, ch.written) }}
	}
	committed := icetable.New(l.t.Ident, md, loc, DetachedFS(ctx, tbl), l.cat)
	removeOldMetadata(context.WithoutCancel(ctx), tbl, committed)
	if l.t.Committed != nil {
		l.t.Committed(committed)
	}
	return ch.snapshot, ch, nil
}

// planned classifies an error of an operation's validate or apply: a
// conflict (the table moved while the operation read it) is retried; any
// other error ends the loop.
func planned(err error) error {
	if errors.Is(err, errCommitFailed) {
		return err
	}
	return noRetry(err)
}

// resolveUnknown handles an error of the commit of ch that is not a
// conflict: it may have been applied. The table is reloaded (even when
// ctx is done) and searched for the change; the reloaded table is
// returned with the outcome (nil when it could not be loaded).
//
// When ctx ended, the error wraps its cause (see withCause).
func (l *loop) resolveUnknown(ctx context.Context, ch *change, cerr error, res *commit.Result) (*icetable.Table, error) {
	t := l.t
	var files []string
	if ch != nil {
		files = ch.files
	}
	cerr = withCause(ctx, cerr)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	tbl, err := l.cat.LoadTable(rctx, t.Ident)
	if err != nil {
		return nil, &commit.UnknownOutcomeError{Op: t.Op, Token: t.Token, Files: files, Err: errors.Join(cerr, err)}
	}
	if s := l.found(tbl, ch); s != nil {
		res.SnapshotID = s.SnapshotID
		if t.Committed != nil { // the state holding the change, as after an answered commit
			t.Committed(tbl)
		}
		return tbl, nil
	}
	if errors.Is(cerr, rest.ErrCommitStateUnknown) {
		// A REST server said it does not know whether the commit applied
		// (a 5xx): it may still apply after this reload. Keep the files.
		return tbl, &commit.UnknownOutcomeError{Op: t.Op, Token: t.Token, Files: files, Err: cerr}
	}
	return tbl, fmt.Errorf("%s: commit not applied: %w", t.Op, cerr)
}

// found returns the snapshot of ch in tbl, nil when the commit is not
// there.
func (l *loop) found(tbl *icetable.Table, ch *change) *icetable.Snapshot {
	if ch != nil && ch.landed != nil {
		return ch.landed(tbl.Metadata())
	}
	view, err := OnBranch(tbl, l.branch)
	if err != nil {
		return nil
	}
	return findToken(view.Metadata(), l.t.Token)
}

// withCause returns err wrapping the cause of ctx when ctx has ended and
// err does not wrap it already: a cancellation can surface from a catalog
// as another error (database/sql's ErrTxDone, a closed connection).
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w: %w", cause, err)
	}
	return err
}

// noRetryError marks an error raised before the catalog was called: it is
// neither a conflict nor an unknown outcome.
type noRetryError struct{ err error }

func (e *noRetryError) Error() string { return e.err.Error() }
func (e *noRetryError) Unwrap() error { return e.err }

func noRetry(err error) error { return &noRetryError{err} }

// catalogError is an error of the catalog's commit call, with what removes
// the manifests the attempt wrote, for use once it is known that the
// commit was not applied.
type catalogError struct {
	err     error
	discard func() error
}

func (e *catalogError) Error() string { return e.err.Error() }
func (e *catalogError) Unwrap() error { return e.err }
