package snapshotcommit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// PublishRequest publishes a branch onto main.
type PublishRequest struct {
	Op     string // names the operation in errors
	Ident  icetable.Identifier
	Branch string
	// Force lets the branch win a conflict: its partitions replace what
	// main holds, even where main replaced them after the branch's base.
	Force   bool
	Lineage Lineage // the publisher's run; the code version is the branch writes' when they agree
	Token   string
	Policy  commit.Policy
	// Lock, when set, is held around every attempt, as [Request].Lock.
	Lock commit.Locker
	// Committed, when set, is called with the table state the commit
	// produced.
	Committed func(tbl *icetable.Table)
	// OldSpec, when set, returns what decides the fate of main's data
	// files of older partition specs that may hold rows of the published
	// parts (see [Request].OldSpec). It is called again when an attempt
	// publishes other parts than the one before. Nil fails a publish that
	// meets such files with [commit.ErrUnsupported].
	OldSpec func(spec *partition.Spec, parts []Part) OldSpecFunc

	decided *decisions     // OldSpec's decisions for the parts of sig
	sig     string         // the spec and keys decided was made for
	cache   *manifestCache // manifests read, kept across attempts
}

// Publish makes main hold what the branch's icerun writes made of their
// partitions, in one commit:
//
//   - the base is the snapshot of main the branch was cut from or last
//     published to: the newest snapshot on main's ancestry that is on the
//     branch's ancestry too, or that published the branch
//     ([commit.SummaryPublishedBranch]);
//   - the branch's writes since the base are its snapshots with icerun
//     lineage after the base (after the published head); none: the
//     result is Unchanged;
//   - when main is still at the base and the base is on the branch's
//     ancestry, main's ref moves to the branch's head (fast-forward; no
//     file is written);
//   - otherwise the partitions the branch replaced are replaced on main's
//     current state with the data files they hold on the branch (no data
//     file is written), in a snapshot that records the branch's lineage
//     and [commit.SummaryPublishedHead]. A partition whose files on main differ
//     from the base's was replaced by main since: [commit.ErrPublishConflict],
//     unless Force.
//
// Conflicts with concurrent commits are retried like [Replace]'s.
//
// The rewrites of older-spec decisions (OldSpec) belong to Publish, as to
// [Replace]: those the table does not reference when it returns are
// removed.
func Publish(ctx context.Context, cat catalog.Catalog, pr PublishRequest) (res commit.Result, err error) {
	pr.decided, pr.sig, pr.cache = newDecisions(), "", newManifestCache()
	var last *icetable.Table
	defer func() { pr.decided.release(ctx, last, err) }()
	req := &Request{Op: pr.Op, Ident: pr.Ident, Token: pr.Token, Policy: pr.Policy, Committed: pr.Committed, Lock: pr.Lock}
	return req.run(ctx, cat, commit.Result{}, &last, func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error) {
		return pr.attempt(ctx, cat, req, tbl, res)
	})
}

// attempt plans the publish on tbl (main as the catalog holds it) and
// commits it.
func (pr *PublishRequest) attempt(ctx context.Context, cat catalog.Catalog, req *Request, tbl *icetable.Table, res *commit.Result) (int64, error) {
	*res = commit.Result{Attempts: res.Attempts}
	req.landed = nil                                      // a fast-forward sets it
	defer func() { req.Spec, req.extraReqs = nil, nil }() // planned again on the next attempt's state
	md := tbl.Metadata()
	ref, ok := Ref(md, pr.Branch)
	if !ok {
		return 0, noRetry(fmt.Errorf("%w: %s", commit.ErrNoSuchBranch, pr.Branch))
	}
	view, err := atSnapshot(tbl, pr.Branch, ref)
	if err != nil {
		return 0, noRetry(err)
	}
	pl, err := planPublish(md, pr.Branch, view.CurrentSnapshot())
	if err != nil {
		return 0, noRetry(err)
	}
	res.Partitions = slices.Sorted(maps.Keys(pl.records))
	main := tbl.CurrentSnapshot()
	if len(pl.records) == 0 {
		res.Unchanged = true
		if main != nil {
			return main.SnapshotID, nil
		}
		return 0, nil
	}
	if sameSnapshot(main, pl.base) && (pl.forked || pl.base == nil) {
		return pr.fastForward(ctx, cat, req, tbl, pl)
	}

	// Re-planned: the branch's keys are planned on main's current spec.
	if err := pl.sameSpec(md, pr.Branch); err != nil {
		return 0, noRetry(err)
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return 0, noRetry(err)
	}
	keys := make(map[partition.Key]bool, len(res.Partitions))
	for _, k := range res.Partitions {
		pk, err := partition.ParseKey(tbl.Spec(), tbl.Schema(), k)
		if err != nil {
			return 0, noRetry(fmt.Errorf("branch %s: partition %s: %w", pr.Branch, k, err))
		}
		keys[pk] = true
	}
	onBranch, err := planFiles(ctx, view, spec, keys, pr.cache)
	if err != nil {
		return 0, movedWhilePlanning(ctx, cat, tbl, err)
	}
	// Older-spec files the branch still lists hold no row of the keys:
	// the branch's icerun writes deleted or rewrote those that did.
	if !pr.Force {
		if err := pr.conflicts(ctx, tbl, spec, keys, pl.base); err != nil {
			var pc *commit.PublishConflictError
			if errors.As(err, &pc) {
				return 0, err
			}
			return 0, movedWhilePlanning(ctx, cat, tbl, err)
		}
	}

	if err := carriedDeletes(pr.Branch, onBranch.current); err != nil {
		return 0, noRetry(err)
	}

	req.Spec, req.SchemaID, req.Parts = spec, tbl.Schema().ID, nil
	// The commit requires the branch head it re-planned from, as a
	// fast-forward does: a branch dropped (and its files expired) or moved
	// since is planned again.
	head := pl.head.SnapshotID
	req.extraReqs = []icetable.Requirement{icetable.AssertRefSnapshotID(pr.Branch, &head)}
	req.Lineage = Lineage{RunID: pr.Lineage.RunID, CodeVersion: pl.codeVersion(pr.Lineage.CodeVersion), SchemaID: tbl.Schema().ID}
	req.summaryExtra = iceberg.Properties{commit.SummaryPublishedBranch: pr.Branch, commit.SummaryPublishedHead: strconv.FormatInt(pl.head.SnapshotID, 10)}
	for k := range keys {
		rows := liveRows(onBranch.current[k])
		req.Parts = append(req.Parts, Part{Key: k, Files: onBranch.current[k], Fingerprint: pl.records[k.String()].Fingerprint, Rows: rows})
		res.AddedRows += rows
	}
	slices.SortFunc(req.Parts, func(a, b Part) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	if sig := strconv.Itoa(spec.ID()) + ":" + strings.Join(res.Partitions, ","); sig != pr.sig {
		// Other parts than the previous attempt's: its decisions and
		// rewrites do not hold for these.
		_ = pr.decided.removeUnused(context.WithoutCancel(ctx), tbl, false)
		pr.sig, pr.decided, req.OldSpec = sig, newDecisions(), nil
		if pr.OldSpec != nil {
			req.OldSpec = pr.OldSpec(spec, req.Parts)
		}
	}
	return req.attempt(ctx, cat, tbl, keys, pr.decided, pr.cache, res)
}

// conflicts fails with a *PublishConflictError when main replaced one of
// keys after base: the partition's files on main now differ from base's.
func (pr *PublishRequest) conflicts(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys map[partition.Key]bool, base *icetable.Snapshot) error {
	now, err := planFiles(ctx, tbl, spec, keys, pr.cache)
	if err != nil {
		return err
	}
	then := plan{current: map[partition.Key][]iceberg.DataFile{}}
	if base != nil {
		at, err := atSnapshot(tbl, "base of "+pr.Branch, icetable.SnapshotRef{SnapshotID: base.SnapshotID, SnapshotRefType: icetable.BranchRef})
		if err != nil {
			return noRetry(err)
		}
		if then, err = planFiles(ctx, at, spec, keys, pr.cache); err != nil {
			return err
		}
	}
	var both []string
	for k := range keys {
		if filesHash(now.current[k]) != filesHash(then.current[k]) {
			both = append(both, k.String())
		}
	}
	if len(both) == 0 {
		return nil
	}
	slices.Sort(both)
	return noRetry(&commit.PublishConflictError{Branch: pr.Branch, Partitions: both})
}

// movedWhilePlanning classifies err, a failure to read the files of the
// state tbl (as loaded for this attempt) holds: a file that is gone while
// the table moved since (a branch dropped and its snapshots expired, or
// main's) is a conflict, planned again on the new state; anything else
// ends the call.
func movedWhilePlanning(ctx context.Context, cat catalog.Catalog, tbl *icetable.Table, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return noRetry(err)
	}
	now, lerr := cat.LoadTable(ctx, tbl.Identifier())
	if lerr != nil || now.MetadataLocation() == tbl.MetadataLocation() {
		return noRetry(err)
	}
	return fmt.Errorf("%w: the table moved while the publish read its files: %w", errCommitFailed, err)
}

// fastForward moves main's ref to the branch's head.
func (pr *PublishRequest) fastForward(ctx context.Context, cat catalog.Catalog, req *Request, tbl *icetable.Table, pl publishPlan) (int64, error) {
	var base *int64
	if pl.base != nil {
		base = &pl.base.SnapshotID
	}
	head := pl.head.SnapshotID
	reqs := []icetable.Requirement{
		icetable.AssertTableUUID(tbl.Metadata().TableUUID()),
		icetable.AssertRefSnapshotID(icetable.MainBranch, base),
		icetable.AssertRefSnapshotID(pr.Branch, &head),
	}
	updates := []icetable.Update{setBranch(tbl.Metadata(), icetable.MainBranch, head)}
	req.landed = func(md icetable.Metadata) *icetable.Snapshot {
		if s := md.CurrentSnapshot(); s != nil && s.SnapshotID == head {
			return s
		}
		return nil
	}
	md, loc, err := cat.CommitTable(ctx, pr.Ident, reqs, updates)
	if err != nil {
		return 0, &catalogError{err: err, discard: func() error { return nil }}
	}
	if req.Committed != nil {
		req.Committed(icetable.New(pr.Ident, md, loc, DetachedFS(ctx, tbl), cat))
	}
	return head, nil
}

func sameSnapshot(a, b *icetable.Snapshot) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SnapshotID == b.SnapshotID
}

// DropBranch removes the ref of branch from the table; its snapshots stay
// until they are expired. Conflicts are retried like [Replace]'s.
// A non-nil lock is held around every attempt, as [Request].Lock.
func DropBranch(ctx context.Context, cat catalog.Catalog, op string, ident icetable.Identifier, branch string, pol commit.Policy, lock commit.Locker) error {
	req := &Request{Op: op, Ident: ident, Policy: pol, Lock: lock}
	req.landed = func(md icetable.Metadata) *icetable.Snapshot {
		if _, ok := Ref(md, branch); !ok {
			return &icetable.Snapshot{} // gone: the drop landed
		}
		return nil
	}
	var last *icetable.Table
	_, err := req.run(ctx, cat, commit.Result{}, &last, func(ctx context.Context, tbl *icetable.Table, res *commit.Result) (int64, error) {
		ref, ok := Ref(tbl.Metadata(), branch)
		if !ok {
			return 0, noRetry(fmt.Errorf("%w: %s", commit.ErrNoSuchBranch, branch))
		}
		if ref.SnapshotRefType != icetable.BranchRef {
			return 0, noRetry(fmt.Errorf("%w: ref %q is a %s, not a branch", commit.ErrUnsupported, branch, ref.SnapshotRefType))
		}
		reqs := []icetable.Requirement{
			icetable.AssertTableUUID(tbl.Metadata().TableUUID()),
			icetable.AssertRefSnapshotID(branch, &ref.SnapshotID),
		}
		if _, _, err := cat.CommitTable(ctx, ident, reqs, []icetable.Update{icetable.NewRemoveSnapshotRefUpdate(branch)}); err != nil {
			return 0, &catalogError{err: err, discard: func() error { return nil }}
		}
		return 0, nil
	})
	return err
}
