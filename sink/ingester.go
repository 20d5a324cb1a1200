package sink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// Ingester is the front of a [Sink] for sources without positions (HTTP
// or gRPC requests, a queue that redelivers without offsets): many
// goroutines hand it records, it group-commits them on the sink's cadence
// ([WithCommitRows], [WithCommitBytes], [WithCommitInterval]), and each
// [Ingester.Write] returns once its rows are committed. Safe for
// concurrent use.
//
// Such a source retries instead of replaying from a position, so the
// dedupe is keyed mode ([WithKey], required) on a deterministic id of each
// record (package recordid derives one from the record's own columns):
// a retried record carries the id of its first delivery, and the sink
// drops it when the table or the pending batch already holds the id. The
// offsets the sink records are the ingester's own, one per row in arrival
// order on its [SourcePartition], resumed from the table after a restart;
// they order the rows and fence a second process writing the same source
// partition ([ErrFenced]), nothing more. Replicas of a service writing one
// table each take a source partition of their own; the key check across
// sinks ([ErrKeyCommitted]) keeps a record retried on another replica
// once.
//
// Invariants, kept by the one goroutine that owns the sink:
//   - every request in waiting has its rows in the sink's pending batch
//     (or dropped as duplicates, which the positions of that batch still
//     record), and is answered with the result of the commit of that
//     batch;
//   - the sink never commits by itself: the owner reads the cadence and
//     calls [Sink.Commit], so that every commit answers exactly the
//     requests written before it;
//   - after a failed commit the owner calls [Sink.Start] before it writes
//     again, so that the next batch is fenced on the table as it is.
type Ingester struct {
	from   SourcePartition
	name   string
	reqs   chan *ingestRequest
	quit   chan struct{}
	done   chan struct{}
	cancel context.CancelFunc // of the owner's context

	mu     sync.RWMutex // held shared by senders, exclusively by Close
	closed bool
	err    error // the owner's last flush, read after done

	statsMu sync.Mutex
	stats   Stats
}

// ingestRequest is one Write waiting in the owner.
type ingestRequest struct {
	rec      arrow.RecordBatch // retained for the owner, released by it
	arrived  time.Time         // when Write handed it over: its wait for a commit starts
	done     chan error        // buffered: the owner never blocks on it
	canceled atomic.Bool       // the caller left; rows not yet written are skipped
}

// cadence is when the owner commits: the sink's cadence options, which
// the owned sink itself no longer applies.
type cadence struct {
	rows     int64
	bytes    int64
	interval time.Duration
}

// OpenIngester opens a sink of table ident of cat with opts (which must
// turn keyed mode on with [WithKey]: without it a retried record would be
// a second row; [Open] fails with [ErrBadOption]) and starts the
// goroutine that owns it, writing the rows handed to [Ingester.Write] on
// source partition from from the offset after the one the table holds.
// Call [Ingester.Close] to flush and stop it.
func OpenIngester(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, from SourcePartition, opts ...Option) (*Ingester, error) {
	s, err := Open(ctx, cat, ident, opts...)
	if err != nil {
		return nil, err
	}
	if s.keys == nil {
		return nil, fmt.Errorf("%w: ingester of %s without keyed mode (WithKey): a retried record would be committed twice", ErrBadOption, s.name)
	}
	if from.Source == "" {
		return nil, fmt.Errorf("%w: ingester of %s: a source partition without a source name", ErrBadOption, s.name)
	}
	pos, err := s.Start(ctx, from)
	if err != nil {
		return nil, err
	}
	s.held = &heldMaintenance{}
	cad := cadence{rows: s.cfg.commitRows, bytes: s.cfg.commitBytes, interval: s.cfg.commitInterval}
	s.cfg.commitRows, s.cfg.commitBytes, s.cfg.commitInterval = math.MaxInt64, math.MaxInt64, time.Duration(math.MaxInt64)
	octx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	in := &Ingester{
		from: from, name: s.name,
		reqs: make(chan *ingestRequest, 256), quit: make(chan struct{}), done: make(chan struct{}),
		cancel: cancel,
	}
	o := &owner{in: in, s: s, cad: cad, next: pos[from] + 1}
	go o.run(octx)
	return in, nil
}

// Write hands the ingester rec, whose rows carry the key columns of
// [WithKey], and returns once they are committed: nil when the commit
// that holds them (or holds the rows their keys repeat) landed, the
// commit's error when it failed (then every caller of that commit gets
// it: nothing of the batch is in the table, except after a
// *commit.UnknownOutcomeError, when it may be; a retry of the same
// records is safe either way, keyed mode drops those committed). A
// record the sink refuses (a [*RowError], [ErrBadInput]) fails its own
// Write only. rec is neither retained nor released past the call (the
// ingester keeps a reference of its own while it needs the rows).
//
// When ctx ends first, Write returns ctx's error at once, and the batch
// is left as it was: rows the owner had not yet written are skipped, rows
// it had written stay in the batch and may still commit. So an early
// return means "unknown", as for a lost reply: send the records again.
//
// After [Ingester.Close], Write fails with [ErrClosed].
func (in *Ingester) Write(ctx context.Context, rec arrow.RecordBatch) error {
	if rec == nil {
		return fmt.Errorf("%w: ingest %s: nil record", ErrBadInput, in.name)
	}
	if rec.NumRows() == 0 {
		return nil
	}
	r := &ingestRequest{rec: rec, arrived: time.Now(), done: make(chan error, 1)}
	in.mu.RLock()
	if in.closed {
		in.mu.RUnlock()
		return ErrClosed
	}
	rec.Retain()
	select {
	case in.reqs <- r:
		in.mu.RUnlock()
	case <-ctx.Done():
		in.mu.RUnlock()
		rec.Release()
		return fmt.Errorf("sink: ingest %s: %w (nothing of the record was written)", in.name, ctx.Err())
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		r.canceled.Store(true)
		return fmt.Errorf("sink: ingest %s: %w (the rows may still commit)", in.name, ctx.Err())
	}
}

// Close stops taking records, writes those already handed over, commits
// them (answering their callers) and closes the sink; the owning
// goroutine has ended when it returns. Its error is that of the last
// commit. When ctx ends first, the flush is cancelled (its callers get
// the error) and Close returns once the goroutine has ended. Calls after
// the first return nil.
func (in *Ingester) Close(ctx context.Context) error {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil
	}
	in.closed = true
	in.mu.Unlock()
	close(in.quit)
	select {
	case <-in.done:
		return in.err
	case <-ctx.Done():
		in.cancel()
		<-in.done
		return errors.Join(in.err, fmt.Errorf("sink: ingest %s: close: %w", in.name, ctx.Err()))
	}
}

// Stats returns what the owned sink did so far, as of its last write or
// commit.
func (in *Ingester) Stats() Stats {
	in.statsMu.Lock()
	defer in.statsMu.Unlock()
	return in.stats
}

// owner is the state of the goroutine that owns the sink.
type owner struct {
	in      *Ingester
	s       *Sink
	cad     cadence
	next    int64 // the offset of the next row
	waiting []*ingestRequest
	restart bool // a commit failed: Start before the next write
}

func (o *owner) run(ctx context.Context) {
	defer close(o.in.done)
	defer o.in.cancel()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var tick <-chan time.Time
		if len(o.waiting) > 0 {
			tick = timer.C
		}
		select {
		case r := <-o.in.reqs:
			if o.write(ctx, r) && len(o.waiting) == 1 {
				timer.Reset(time.Until(r.arrived.Add(o.cad.interval)))
			}
			if o.s.rows >= o.cad.rows || o.s.bytes >= o.cad.bytes {
				o.commit(ctx)
			}
		case <-tick:
			// The requests that queued meanwhile (during the last
			// commit) join this one.
			o.drain(ctx)
			o.commit(ctx)
		case <-o.in.quit:
			o.flush(ctx)
			return
		}
	}
}

// drain writes the requests queued now (at most the queue's capacity,
// so that a steady stream still commits).
func (o *owner) drain(ctx context.Context) {
	for range cap(o.in.reqs) {
		select {
		case r := <-o.in.reqs:
			o.write(ctx, r)
		default:
			return
		}
	}
}

// flush writes the requests queued before Close, commits and closes the
// sink.
func (o *owner) flush(ctx context.Context) {
	for len(o.in.reqs) > 0 {
		o.drain(ctx)
	}
	err := o.commit(ctx)
	if cerr := o.s.Close(ctx); err == nil { // nothing pending is left: it closes
		err = cerr
	}
	o.in.err = err
	o.publish()
}

// write writes r's rows to the sink and reports whether they now wait
// for a commit; otherwise r has been answered.
func (o *owner) write(ctx context.Context, r *ingestRequest) bool {
	defer r.rec.Release()
	if r.canceled.Load() {
		r.done <- context.Canceled
		return false
	}
	if o.restart {
		pos, err := o.s.Start(ctx, o.in.from)
		if err != nil {
			r.done <- err
			return false
		}
		o.next, o.restart = pos[o.in.from]+1, false
	}
	n := r.rec.NumRows()
	offsets := make([]int64, n)
	for i := range offsets {
		offsets[i] = o.next + int64(i)
	}
	hadPending := len(o.s.pending) > 0
	err := o.s.Write(ctx, o.in.from, offsets, r.rec)
	o.next += n
	defer o.publish()
	switch {
	case err == nil:
		o.waiting = append(o.waiting, r)
		return true
	case hadPending && len(o.s.pending) == 0: // the batch was dropped with r
		o.answer(err)
		r.done <- err
	default: // r refused alone
		r.done <- err
	}
	return false
}

// commit commits the pending batch and answers every waiting request
// with its result.
func (o *owner) commit(ctx context.Context) error {
	if len(o.waiting) == 0 && len(o.s.pending) == 0 {
		return nil
	}
	_, err := o.s.Commit(ctx)
	if err != nil {
		o.restart = true
	}
	o.answer(err)
	o.maintain(ctx)
	o.publish()
	return err
}

// maintain runs the maintenance the commits held (snapshot expiry,
// compactions) once their callers have been answered: it never delays an
// acknowledgement.
func (o *owner) maintain(ctx context.Context) {
	h := o.s.held
	if !h.due {
		return
	}
	o.s.held = nil
	o.s.maintain(ctx, h.files)
	o.s.held = &heldMaintenance{}
}

// heldMaintenance is what the commits of an Ingester's sink left for
// after their answers: the data files they added.
type heldMaintenance struct {
	files []iceberg.DataFile
	due   bool
}

// answer answers every waiting request with err.
func (o *owner) answer(err error) {
	for _, r := range o.waiting {
		r.done <- err
	}
	o.waiting = nil
}

func (o *owner) publish() {
	o.in.statsMu.Lock()
	o.in.stats = o.s.stats
	o.in.statsMu.Unlock()
}
