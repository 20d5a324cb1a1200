package backfill

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// Job produces the rows of partition key. It must be a function of the key
// and of immutable inputs only: never of the clock, of "yesterday", or of
// upstream state that changes. The runner releases the reader.
type Job func(ctx context.Context, key partition.Key) (array.RecordReader, error)

// ErrKeysFailed is returned by Run when some keys failed every attempt
// (under [Continue], or the first under [Stop]).
var ErrKeysFailed = errors.New("backfill: keys failed")

// Progress is reported after every group of keys.
type Progress struct {
	Done, Total int   // keys finished (written, unchanged, skipped or failed) and all keys
	Skipped     int   // keys skipped as already done by this code version
	Failed      int   // keys whose group failed every attempt
	Rows        int64 // rows the jobs produced so far
	// Elapsed, RowsPerSec and ETA are zero unless the run has a clock
	// ([WithClock]). ETA extrapolates from the keys done in this run.
	Elapsed    time.Duration
	RowsPerSec float64
	ETA        time.Duration
}

// Failure is a group of keys that failed every attempt.
type Failure struct {
	Keys     []partition.Key
	Attempts int
	Err      error
}

// Report is the outcome of a run.
type Report struct {
	Total     int // keys asked for (the shard's keys under WithShard)
	Written   int // keys replaced by a new snapshot
	Unchanged int // keys that already held their rows: no snapshot
	Skipped   int // keys skipped by SkipDone
	Failed    []Failure
	Rows      int64 // rows the jobs produced
	Commits   int   // snapshots made by replacements
	// Conflicts counts the commit attempts of successful groups that lost
	// a race with another writer and were re-planned on the new table
	// state (commit.Result.Attempts - 1, summed); Retries counts the
	// attempts of groups beyond their first (the jobs called again).
	Conflicts, Retries int
	// Before and After describe the table's metadata at the start and
	// at the end of the run (after the hygiene).
	Before, After Stats
}

// Run replaces the partition of every key with the rows job returns for
// it, each key (or group of [WithKeysPerSnapshot] keys) its own idempotent
// replace through w, with bounded concurrency ([WithWorkers]), in any
// order. A failed group is retried ([WithRetries]); then the run stops or
// continues ([WithOnFailure]). A run is resumable: with [SkipDone] (the
// default), keys whose latest write was made by w's code version are
// skipped, as read from the snapshot summaries, not from a local file.
//
// Run performs the metadata hygiene of [WithHygiene] (default
// [DefaultHygiene]): it sets the metadata pruning properties right after
// its first commit (a run where nothing lands changes no property), expires snapshots during the run when asked
// (Hygiene.KeepSnapshots) and after a run without failures. When ctx is
// cancelled, Run returns its cause once the groups in flight have stopped;
// every key committed so far stays committed, and the next run skips it.
func Run(ctx context.Context, w *table.Writer, keys []partition.Key, job Job, opts ...Option) (Report, error) {
	cfg := defaults()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return Report{}, err
		}
	}
	if w == nil || job == nil {
		return Report{}, fmt.Errorf("%w: nil writer or job", ErrBadOption)
	}
	if h := cfg.hygiene; w.Branch() != "" && (h.KeepSnapshots > 0 || h.ExpireRetainLast > 0) {
		// Expiry keeps main's ancestry; a branch's writes are not on it.
		return Report{}, fmt.Errorf("%w: snapshot expiry with a writer on branch %s", ErrBadOption, w.Branch())
	}
	keys = cfg.shard.keys(keys)
	r := &runner{w: w, job: job, cfg: cfg, rep: Report{Total: len(keys)}}
	if cfg.clock != nil {
		r.start = cfg.clock()
	}
	tbl, err := refresh(ctx, w)
	if err != nil {
		return r.rep, fmt.Errorf("backfill: %w", err)
	}
	if r.rep.Before, err = Measure(ctx, tbl); err != nil {
		return r.rep, fmt.Errorf("backfill: measure: %w", err)
	}
	onBranch, err := snapshotcommit.OnBranch(tbl, w.Branch()) // resume reads the writer's branch
	if err != nil {
		return r.rep, fmt.Errorf("backfill: %w", err)
	}
	todo := r.skipDone(ctx, onBranch, cfg.order.apply(keys))
	if err := r.runAll(ctx, todo); err != nil {
		return r.rep, err
	}
	hctx := context.WithoutCancel(ctx)
	if r.propsErr != nil {
		return r.rep, fmt.Errorf("backfill: set metadata properties: %w", r.propsErr)
	}
	if r.expireErr != nil {
		return r.rep, fmt.Errorf("backfill: expire snapshots during the run: %w", r.expireErr)
	}
	if len(r.rep.Failed) == 0 {
		if err := cfg.hygiene.expire(hctx, w); err != nil {
			return r.rep, fmt.Errorf("backfill: expire snapshots: %w", err)
		}
	}
	if tbl, err = refresh(hctx, w); err == nil {
		r.rep.After, err = Measure(hctx, tbl)
	}
	if err != nil {
		return r.rep, fmt.Errorf("backfill: measure: %w", err)
	}
	if len(r.rep.Failed) > 0 {
		f := r.rep.Failed[0]
		return r.rep, fmt.Errorf("%w: %d groups, first %v after %d attempts: %w", ErrKeysFailed, len(r.rep.Failed), f.Keys, f.Attempts, f.Err)
	}
	return r.rep, nil
}

// runner is the state of one Run; its mutex guards rep and the counters.
type runner struct {
	w     *table.Writer
	job   Job
	cfg   config
	start time.Time
	ids   map[string]string // input identities by key text (WithInputIdentity)

	mu       sync.Mutex
	rep      Report
	done     int
	doneHere int // keys done by this run (not skipped), for the ETA
	// expiring is held by the one worker that expires snapshots during
	// the run (Hygiene.KeepSnapshots); the others go on. expireErr is the
	// last expiry's error (nil once one succeeds), returned by Run.
	expiring  sync.Mutex
	expireErr error
	// props sets the metadata pruning properties once, after the first
	// commit; propsErr is its error, returned by Run.
	props    sync.Once
	propsErr error
}

// skipDone drops the keys whose latest write was made by this code version
// (and recorded the same input identity, see WithInputIdentity).
func (r *runner) skipDone(ctx context.Context, tbl *icetable.Table, keys []partition.Key) []partition.Key {
	r.ids = r.identities(ctx, keys)
	if r.cfg.resume != SkipDone {
		return keys
	}
	texts := make([]string, len(keys))
	for i, k := range keys {
		texts[i] = k.String()
	}
	last := table.LastWrites(tbl, texts)
	var todo []partition.Key
	for i, k := range keys {
		id, haveID := r.ids[texts[i]]
		if wr, ok := last[texts[i]]; ok && r.isDone(wr, id, haveID) {
			r.rep.Skipped++
			r.done++
			continue
		}
		todo = append(todo, k)
	}
	return todo
}

// runAll runs the groups of todo with up to cfg.workers at once. It
// returns ctx's cause when the run was cancelled.
func (r *runner) runAll(ctx context.Context, todo []partition.Key) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, r.cfg.workers)
	var wg sync.WaitGroup
	var stopped error
loop:
	for lo := 0; lo < len(todo); lo += r.cfg.perSnapshot {
		group := todo[lo:min(lo+r.cfg.perSnapshot, len(todo))]
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		if ctx.Err() != nil {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if f := r.runGroup(ctx, group); f != nil && r.cfg.onFailure == Stop {
				cancel(fmt.Errorf("%w: %v: %w", ErrKeysFailed, f.Keys, f.Err))
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		stopped = err
	}
	if stopped != nil && !errors.Is(stopped, ErrKeysFailed) {
		return fmt.Errorf("backfill: interrupted: %w", stopped)
	}
	return nil
}

// runGroup replaces the partitions of group, retrying, and accounts for
// it. It returns the failure when every attempt failed (not when ctx was
// cancelled).
func (r *runner) runGroup(ctx context.Context, group []partition.Key) *Failure {
	var (
		res  commit.Result
		rows int64
		err  error
		n    int
	)
	for n = 1; ; n++ {
		res, rows, err = r.replace(ctx, group)
		if err == nil || ctx.Err() != nil || n > r.cfg.retries || !retryable(err) {
			break
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil // interrupted: neither done nor failed
	}
	r.mu.Lock()
	var f *Failure
	r.done += len(group)
	r.doneHere += len(group)
	r.rep.Rows += rows
	r.rep.Retries += n - 1
	if err == nil {
		r.rep.Conflicts += max(res.Attempts-1, 0)
	}
	switch {
	case err != nil:
		f = &Failure{Keys: group, Attempts: n, Err: err}
		r.rep.Failed = append(r.rep.Failed, *f)
	case res.Unchanged:
		r.rep.Unchanged += len(group)
	default:
		r.rep.Commits++
		for _, p := range res.PerPartition {
			if p.Unchanged {
				r.rep.Unchanged++
			} else {
				r.rep.Written++
			}
		}
		if res.PerPartition == nil {
			r.rep.Written += len(group)
		}
	}
	if r.cfg.progress != nil {
		r.cfg.progress(r.progress())
	}
	r.mu.Unlock()
	if err == nil && !res.Unchanged {
		r.props.Do(func() { r.propsErr = r.cfg.hygiene.setProperties(context.WithoutCancel(ctx), r.w) })
		r.keepSnapshots(ctx)
	}
	return f
}

// keepSnapshots expires all but the last Hygiene.KeepSnapshots snapshots
// once the table holds twice as many. A failed expiry is tried again after
// a later commit; Run returns the error when the last one failed.
func (r *runner) keepSnapshots(ctx context.Context) {
	keep := r.cfg.hygiene.KeepSnapshots
	if keep == 0 || len(r.w.Table().Metadata().Snapshots()) <= 2*keep || !r.expiring.TryLock() {
		return
	}
	defer r.expiring.Unlock()
	r.expireErr = expire(ctx, r.w, keep, 0)
}

// replace runs the jobs of group and replaces their partitions once.
func (r *runner) replace(ctx context.Context, group []partition.Key) (commit.Result, int64, error) {
	rdr := &concat{ctx: ctx, job: r.job, keys: group, ids: r.ids}
	if len(group) > 1 {
		rdr.tbl = r.w.Table()
	}
	defer rdr.Release()
	if err := rdr.open(); err != nil {
		return commit.Result{}, 0, err
	}
	var (
		res commit.Result
		err error
	)
	if len(group) == 1 {
		res, err = r.w.ReplacePartition(ctx, group[0], rdr)
	} else {
		res, err = r.w.ReplaceWindow(ctx, group, table.RejectLate, rdr)
	}
	if err == nil {
		err = rdr.err
	}
	return res, rdr.rows, err
}

// progress is the current Progress; r.mu is held.
func (r *runner) progress() Progress {
	p := Progress{Done: r.done, Total: r.rep.Total, Skipped: r.rep.Skipped, Failed: failedKeys(r.rep.Failed), Rows: r.rep.Rows}
	if r.cfg.clock == nil {
		return p
	}
	p.Elapsed = r.cfg.clock().Sub(r.start)
	if s := p.Elapsed.Seconds(); s > 0 {
		p.RowsPerSec = float64(p.Rows) / s
	}
	if r.doneHere > 0 {
		p.ETA = time.Duration(float64(p.Elapsed) / float64(r.doneHere) * float64(p.Total-p.Done))
	}
	return p
}

func failedKeys(fs []Failure) int {
	n := 0
	for _, f := range fs {
		n += len(f.Keys)
	}
	return n
}
