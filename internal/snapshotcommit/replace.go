package snapshotcommit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

var errCommitFailed = icetable.ErrCommitFailed

// Part is the new content of one partition.
type Part struct {
	Key         partition.Key
	Files       []iceberg.DataFile // new data files, all of partition Key
	Fingerprint string             // of the input rows of Key
	Rows        int64
	// Input is the identity of Key's input (e.g. a content hash of its
	// files, or the source snapshot read), recorded in the lineage
	// (SummaryPartitionInputs); "" when unknown.
	Input string
}

// Request is one atomic replacement of one or more partitions.
type Request struct {
	Op        string // names the operation in errors, e.g. "commit: replace db.orders/event_date=2026-07-14"
	Ident     icetable.Identifier
	TableUUID string // the table the files were written for
	Spec      *partition.Spec
	SchemaID  int // the schema the files were written with
	Parts     []Part
	Kind      Kind // the Java operation the commit is, for its summary
	Lineage   Lineage
	Token     string // unique per call; recorded as SummaryCommitToken
	Policy    commit.Policy
	// Spent is the attempts a caller's earlier rounds of the same
	// operation spent (a caller that plans again after a lost race, and
	// commits with a new Request): Policy.Attempts is the budget of all
	// rounds, and attempts are numbered on from Spent, in Result.Attempts,
	// Attempted and the errors. At least one attempt is made.
	Spent int
	// Base, when set, is a table state loaded during this call (after the
	// caller began): the first attempt plans on it instead of loading the
	// table again. A state that moved since only costs a conflict and a
	// fresh attempt; an Unchanged result on it is still a state the table
	// held during the call.
	Base    *icetable.Table
	OldSpec OldSpecFunc // decides older-spec files; nil fails when there are any
	// Verify, when set, is called on every attempt after planning and
	// before anything is committed, with the current-spec data files each
	// replaced partition holds in tbl. A non-nil error stops the loop and
	// is returned wrapped with Op: nothing is committed. Copy-on-write
	// callers (table.Writer.Upsert) use it to detect that a partition
	// changed since they read it, and re-merge.
	Verify func(tbl *icetable.Table, files map[partition.Key][]iceberg.DataFile) error
	// TableProperties, when set, returns table properties to set in the
	// same commit, computed from each attempt's table state (icerun keeps
	// the name mapping up to date this way). An empty result sets nothing.
	TableProperties func(md icetable.Metadata) (iceberg.Properties, error)
	// Committed, when set, is called with the table state the commit
	// produced (not after an Unchanged result or an outcome found by token).
	Committed func(tbl *icetable.Table)
	// Attempted, when set, is called after every attempt with its number
	// and error (nil when it committed or found the partitions unchanged);
	// for logs and metrics.
	Attempted func(attempt int, err error)
	// Lock, when set, is held around every attempt's load, plan and
	// commit (see [commit.Locker]); Base is then not used, since a state loaded
	// before the lock was taken may be stale.
	Lock commit.Locker
	// SkipHeld leaves the parts that already hold their input (see
	// holds) as they are, decided on each attempt's table state, and
	// commits the others; the result lists the skipped ones in
	// PerPartition, Unchanged. Without it, parts are skipped only when
	// all of them hold (the result is then Unchanged).
	SkipHeld bool
	// Branch, when set, commits to that branch instead of main: each
	// attempt plans on the branch's head ([OnBranch]), the snapshot's
	// parent is the head, and the commit requires the branch ref, not
	// main, to be where it was. A branch that does not exist yet is cut
	// from main's current snapshot by the commit. Base is the table state
	// as the catalog holds it, not a view.
	Branch string

	summaryExtra iceberg.Properties                            // more summary properties (a publish's)
	extraReqs    []icetable.Requirement                        // more requirements of the commit (a publish's branch head)
	landed       func(md icetable.Metadata) *icetable.Snapshot // finds the commit after an unknown outcome; nil: by Token on the branch
}

// ref is the branch req commits to.
func (req *Request) ref() string {
	if req.Branch == "" {
		return icetable.MainBranch
	}
	return req.Branch
}

// Replace commits req: one snapshot in which every partition of req.Parts
// holds exactly its new files. See the package documentation for the loop.
//
// On error the caller owns req's files: it removes them, except after an
// *UnknownOutcomeError. The replacement files of older-spec decisions
// (req.OldSpec) belong to Replace: when it returns, those that the table
// does not reference are removed, whatever the outcome.
func Replace(ctx context.Context, cat catalog.Catalog, req Request) (res commit.Result, err error) {
	decided := newDecisions() // older-spec decisions, kept across attempts
	var last *icetable.Table  // the latest table state loaded
	defer func() { decided.release(ctx, last, err) }()

	keys := make(map[partition.Key]bool, len(req.Parts))
	for _, p := range req.Parts {
		keys[p.Key] = true
		res.Partitions = append(res.Partitions, p.Key.String())
		res.AddedRows += p.Rows
	}
	slices.Sort(res.Partitions)
	cache := newManifestCache() // manifests read, kept across attempts
	return req.run(ctx, cat, res, &last, func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error) {
		return req.attempt(ctx, cat, tbl, keys, decided, cache, res)
	})
}

// step plans and commits one attempt on tbl, the table as req.Branch sees
// it, and returns the snapshot that holds the change (the current one
// when unchanged). Errors raised before the catalog call are noRetry;
// those of the catalog call are *catalogError.
type step func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error)

// run is the commit loop under req.Policy: load, plan and commit with try,
// classify the outcome, back off and retry on conflicts (see the package
// documentation). It keeps the latest table state loaded in *last.
func (req *Request) run(ctx context.Context, cat catalog.Catalog, res commit.Result, last **icetable.Table, try step) (commit.Result, error) {
	pol, err := req.Policy.WithDefaults()
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

	// stale is 1 once a first attempt planned on req.Base conflicted: the
	// state was old (the caller wrote its files after loading it), which
	// is no lost race. That attempt counts against the budget, but it is
	// retried at once, on a fresh load, and does not lower the priority
	// band (see Policy).
	stale := 0
	budget := max(pol.Attempts, req.Spent+1)
	for attempt := req.Spent + 1; ; attempt++ {
		res.Attempts = attempt
		unlock := func() {}
		if req.Lock != nil {
			u, err := req.Lock.Lock(ctx, req.Ident)
			if err != nil {
				return res, fmt.Errorf("%s: %w", req.Op, err)
			}
			unlock = u
		}
		tbl, err := req.Base, error(nil)
		onBase := attempt == req.Spent+1 && tbl != nil && req.Lock == nil
		if !onBase {
			tbl, err = Load(ctx, cat, req.Ident)
		}
		if err != nil {
			unlock()
			if errors.Is(err, catalog.ErrNoSuchTable) {
				return res, fmt.Errorf("%s: %w: %w", req.Op, commit.ErrTableChanged, err)
			}
			return res, fmt.Errorf("%s: load table: %w", req.Op, withCause(ctx, err))
		}
		*last = tbl
		if err := req.sameTable(tbl); err != nil {
			unlock()
			return res, err
		}
		view, err := OnBranch(tbl, req.Branch)
		if err != nil {
			unlock()
			return res, fmt.Errorf("%s: %w", req.Op, err)
		}
		snap, err := try(ctx, view, &res)
		unlock()
		if req.Attempted != nil && (err != nil || !res.Unchanged) { // an unchanged call committed nothing
			req.Attempted(attempt, err)
		}
		if err == nil {
			res.SnapshotID = snap
			return res, nil
		}
		var nr *noRetryError
		if errors.As(err, &nr) { // failed before reaching the catalog
			return res, fmt.Errorf("%s: %w", req.Op, nr.err)
		}
		var ce *catalogError
		errors.As(err, &ce)
		if ce != nil && errors.Is(err, catalog.ErrNoSuchTable) {
			// The catalog refused the commit: the table was dropped since
			// this attempt loaded it. Nothing was applied.
			rerr := fmt.Errorf("%s: %w: table was dropped: %w", req.Op, commit.ErrTableChanged, err)
			if derr := ce.discard(); derr != nil {
				rerr = fmt.Errorf("%w; %w", rerr, derr)
			}
			return res, rerr
		}
		if !IsConflict(err) {
			now, rerr := req.resolveUnknown(ctx, cat, err, &res)
			var unknown *commit.UnknownOutcomeError
			if rerr != nil && !errors.As(rerr, &unknown) && ce != nil {
				// Not applied: the attempt's manifests are garbage, and so
				// is the metadata file a catalog may have written for it.
				if derr := errors.Join(ce.discard(), removeUnappliedMetadata(context.WithoutCancel(ctx), tbl, now, req.Token)); derr != nil {
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
			if now, lerr := cat.LoadTable(ctx, req.Ident); lerr == nil {
				RemoveLostMetadata(ctx, lost, now)
			}
		}(context.WithoutCancel(ctx), tbl)
		if attempt >= budget {
			return res, fmt.Errorf("%s: %w after %d attempts: %v", req.Op, commit.ErrConflict, attempt, err)
		}
		if onBase {
			stale = 1
			continue
		}
		// The wait bands count the lost races of this round (from the
		// first band again once the caller planned anew).
		t := time.NewTimer(pol.Backoff(attempt - req.Spent - stale))
		select {
		case <-ctx.Done():
			t.Stop()
			return res, fmt.Errorf("%s: %w after %d attempts: %w", req.Op, commit.ErrConflict, attempt, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// sameTable fails when tbl is not the table state the files were written
// for: another table under the same name, another spec or schema.
func (req *Request) sameTable(tbl *icetable.Table) error {
	md := tbl.Metadata()
	switch {
	case req.TableUUID != "" && md.TableUUID().String() != req.TableUUID:
		return fmt.Errorf("%s: %w: table was dropped and recreated", req.Op, commit.ErrTableChanged)
	case req.Spec == nil: // a publish or a ref change: planned on each attempt
		return nil
	case md.DefaultPartitionSpec() != req.Spec.ID():
		return fmt.Errorf("%s: %w: partition spec is now %d, rows were written for %d", req.Op, commit.ErrTableChanged, md.DefaultPartitionSpec(), req.Spec.ID())
	case Supported(md) != nil:
		return fmt.Errorf("%s: %w", req.Op, Supported(md))
	case md.CurrentSchema().ID != req.SchemaID:
		return fmt.Errorf("%s: %w: schema is now %d, rows were written for %d", req.Op, commit.ErrTableChanged, md.CurrentSchema().ID, req.SchemaID)
	}
	return nil
}

// attempt plans and commits once against tbl. It returns the snapshot id
// of the replacement (the current one when unchanged).
func (req *Request) attempt(ctx context.Context, cat catalog.Catalog, tbl *icetable.Table, keys map[partition.Key]bool, decided *decisions, cache *manifestCache, res *commit.Result) (int64, error) {
	p, err := planFiles(ctx, tbl, req.Spec, keys, cache)
	if err != nil {
		return 0, noRetry(err)
	}
	if req.Verify != nil {
		if err := req.Verify(tbl, p.current); err != nil {
			return 0, noRetry(err)
		}
	}
	var del, add []iceberg.DataFile
	decided.begin()
	for _, t := range p.old {
		f := t.File
		if req.OldSpec == nil {
			return 0, noRetry(fmt.Errorf("%w: data file %s was written under spec %d", commit.ErrUnsupported, f.FilePath(), f.SpecID()))
		}
		d, err := decided.decide(ctx, tbl, t, req.OldSpec)
		if err != nil {
			return 0, noRetry(err)
		}
		if d.Delete {
			del = append(del, f)
			add = append(add, d.Replacement...)
		}
	}
	eligible := len(del) == 0 && !p.global // no part holds its input otherwise
	unchanged := eligible
	var recorded map[string]Record
	if eligible {
		want := make(map[string]bool, len(req.Parts))
		for _, part := range req.Parts {
			want[part.Key.String()] = true
		}
		recorded = LastRecords(tbl, want)
	}
	// The parts this attempt commits: all of them, or with SkipHeld those
	// that do not hold their input on this state.
	parts := make([]Part, 0, len(req.Parts))
	res.PerPartition = nil
	for _, part := range req.Parts {
		cur := p.current[part.Key]
		held := eligible && req.holds(recorded, part, cur)
		if req.SkipHeld && held {
			res.PerPartition = append(res.PerPartition, commit.PartitionResult{Key: part.Key.String(), Unchanged: true})
			continue
		}
		unchanged = unchanged && held
		del = append(del, cur...)
		add = append(add, part.Files...)
		parts = append(parts, part)
	}
	if unchanged || (len(del) == 0 && len(add) == 0) {
		res.Unchanged = true
		if s := tbl.CurrentSnapshot(); s != nil {
			return s.SnapshotID, nil
		}
		return 0, nil
	}
	res.Partitions, res.AddedRows = nil, 0
	fps, files := make([]string, len(parts)), make([]string, len(parts))
	for i, part := range parts {
		fps[i], files[i] = part.Fingerprint, filesHash(part.Files)
		res.Partitions = append(res.Partitions, part.Key.String())
		res.AddedRows += part.Rows
	}
	slices.Sort(res.Partitions)
	res.AddedFiles, res.DeletedFiles, res.DeletedRows = len(add), 0, 0
	for _, f := range del {
		if f.ContentType() == iceberg.EntryContentData { // delete files are not counted
			res.DeletedFiles++
			res.DeletedRows += f.Count()
		}
	}
	for _, f := range add[:len(add)-countParts(parts)] { // rewritten older-spec rows stay
		res.DeletedRows -= f.Count()
	}
	var setProps iceberg.Properties
	if req.TableProperties != nil {
		if setProps, err = req.TableProperties(tbl.Metadata()); err != nil {
			return 0, noRetry(err)
		}
	}
	st, err := stage(ctx, tbl, req.ref(), req.Kind, del, add, req.summary(parts, fps, files), setProps, cache)
	if err != nil {
		return 0, noRetry(err)
	}
	md, loc, err := cat.CommitTable(ctx, req.Ident, append(st.reqs, req.extraReqs...), st.updates)
	if err != nil {
		return 0, &catalogError{err: err, discard: func() error { return removeWritten(context.WithoutCancel(ctx), tbl, st.written) }}
	}
	committed := icetable.New(req.Ident, md, loc, DetachedFS(ctx, tbl), cat)
	removeOldMetadata(context.WithoutCancel(ctx), tbl, committed)
	if req.Committed != nil {
		req.Committed(committed)
	}

	return st.snap.SnapshotID, nil
}

func countParts(parts []Part) int {
	n := 0
	for _, p := range parts {
		n += len(p.Files)
	}
	return n
}

// holds reports whether the partition already holds exactly part's input
// from this code version, untouched since: the last icerun snapshot that
// recorded the key saw the same input and left exactly the files the
// partition holds now.
func (req *Request) holds(recorded map[string]Record, part Part, cur []iceberg.DataFile) bool {
	r, ok := recorded[part.Key.String()]
	return ok && r.CodeVersion == req.Lineage.CodeVersion && r.Fingerprint == part.Fingerprint && r.Files == filesHash(cur)
}

// summary is the snapshot summary of a commit of parts (req.Parts, or
// those not skipped) with their fingerprints and file hashes.
func (req *Request) summary(parts []Part, fps, files []string) iceberg.Properties {
	keys := make([]string, len(parts))
	var rows int64
	for i, p := range parts {
		keys[i] = p.Key.String()
		rows += p.Rows
	}
	out := iceberg.Properties{
		commit.SummaryPartitions:            strings.Join(keys, ","),
		commit.SummaryRunID:                 req.Lineage.RunID,
		commit.SummaryCodeVersion:           req.Lineage.CodeVersion,
		commit.SummarySchemaID:              strconv.Itoa(req.Lineage.SchemaID),
		commit.SummaryInputFingerprint:      combine(fps),
		commit.SummaryRows:                  strconv.FormatInt(rows, 10),
		commit.SummaryCommitToken:           req.Token,
		commit.SummaryPartitionFingerprints: strings.Join(fps, ","),
		commit.SummaryPartitionFiles:        strings.Join(files, ","),
	}
	for k, v := range req.summaryExtra {
		out[k] = v
	}
	if req.Spec != nil {
		out[commit.SummaryPartitionSpecID] = strconv.Itoa(req.Spec.ID())
	}
	if v, ok := inputsProperty(parts); ok {
		out[commit.SummaryPartitionInputs] = v
	}
	return out
}

// combine is the input fingerprint of several partitions: SHA-256 of
// their sorted fingerprints, each ended by a newline (none holds one), as
// "parts-<count>-<64 hex digits>"; collision resistant as each
// partition's fingerprint is.
func combine(fps []string) string {
	if len(fps) == 1 {
		return fps[0]
	}
	s := slices.Clone(fps)
	slices.Sort(s)
	h := sha256.New()
	for _, fp := range s {
		h.Write([]byte(fp))
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("parts-%d-%x", len(s), h.Sum(nil))
}

// resolveUnknown handles a commit error that is not a conflict: it may have
// been applied. The table is reloaded (even when ctx is done) and searched
// for our token; the reloaded table is returned with the outcome (nil when
// it could not be loaded).
//
// When ctx ended, the error wraps its cause (see withCause).
func (req *Request) resolveUnknown(ctx context.Context, cat catalog.Catalog, cerr error, res *commit.Result) (*icetable.Table, error) {
	cerr = withCause(ctx, cerr)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	tbl, err := cat.LoadTable(rctx, req.Ident)
	if err != nil {
		return nil, &commit.UnknownOutcomeError{Op: req.Op, Token: req.Token, Files: req.files(), Err: errors.Join(cerr, err)}
	}
	if s := req.found(tbl); s != nil {
		res.SnapshotID = s.SnapshotID
		return tbl, nil
	}
	if errors.Is(cerr, rest.ErrCommitStateUnknown) {
		// A REST server said it does not know whether the commit applied
		// (a 5xx): it may still apply after this reload. Keep the files.
		return tbl, &commit.UnknownOutcomeError{Op: req.Op, Token: req.Token, Files: req.files(), Err: cerr}
	}
	return tbl, fmt.Errorf("%s: commit not applied: %w", req.Op, cerr)
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

// found returns the snapshot of req's commit in tbl, nil when the commit
// is not there.
func (req *Request) found(tbl *icetable.Table) *icetable.Snapshot {
	if req.landed != nil {
		return req.landed(tbl.Metadata())
	}
	view, err := OnBranch(tbl, req.Branch)
	if err != nil {
		return nil
	}
	return findToken(view.Metadata(), req.Token)
}

// noRetryError marks an error raised before the catalog was called: it is
// neither a conflict nor an unknown outcome.
type noRetryError struct{ err error }

func (e *noRetryError) Error() string { return e.err.Error() }
func (e *noRetryError) Unwrap() error { return e.err }

func noRetry(err error) error { return &noRetryError{err} }

// Supported fails with ErrUnsupported for a table icerun cannot replace
// partitions of: callers check it before writing anything, and the commit
// loop checks it again on every attempt.
func Supported(md icetable.Metadata) error {
	format := md.Properties().Get(icetable.WriteFormatDefaultKey, icetable.WriteFormatDefaultDefault)
	switch ff, err := iceberg.FileFormatFromString(format); {
	case md.Version() > 3:
		return fmt.Errorf("%w: format version %d: icerun writes format versions 1 to 3", commit.ErrUnsupported, md.Version())
	case err != nil || ff != iceberg.ParquetFile:
		// iceberg-go v0.7.0 writes Parquet only; for ORC or Avro its writer
		// fails on a nil file format.
		return fmt.Errorf("%w: %s=%q: iceberg-go v0.7.0 writes Parquet data files only",
			commit.ErrUnsupported, icetable.WriteFormatDefaultKey, format)
	}
	return fixedPartitions(md)
}

// fixedPartitions refuses a current spec with a partition field of type
// fixed (identity of a fixed column): iceberg-go v0.7.0's manifest writer
// encodes such values in a form Java Iceberg cannot decode ("Invalid int
// encoding"), so Spark could not read the manifests icerun writes (the
// interop suite found it; iceberg-go's own appends fail the same way).
func fixedPartitions(md icetable.Metadata) error {
	sch := md.CurrentSchema()
	spec := md.PartitionSpec()
	for _, f := range spec.Fields() {
		src, ok := sch.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		if _, fixed := f.Transform.ResultType(src.Type).(iceberg.FixedType); fixed {
			return fmt.Errorf("%w: partition field %s is %s: iceberg-go v0.7.0 writes fixed partition values into manifests that Java Iceberg cannot read",
				commit.ErrUnsupported, f.Name, src.Type)
		}
	}
	return nil
}

// files are the paths of the data files req adds.
func (req *Request) files() []string {
	var paths []string
	for _, p := range req.Parts {
		for _, f := range p.Files {
			paths = append(paths, f.FilePath())
		}
	}
	return paths
}

// catalogError is an error of the catalog's commit call, with what removes
// the manifests the attempt wrote, for use once it is known that the
// commit was not applied.
type catalogError struct {
	err     error
	discard func() error
}

func (e *catalogError) Error() string { return e.err.Error() }
func (e *catalogError) Unwrap() error { return e.err }
