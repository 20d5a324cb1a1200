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

// PublishRequest publishes a branch onto main. Its Target's Spec is
// unused: a publish plans the spec and schema on each attempt's state.
type PublishRequest struct {
	Target
	Branch string
	// Force lets the branch win a conflict: its partitions replace what
	// main holds, even where main replaced them after the branch's base.
	Force   bool
	Lineage Lineage // the publisher's run; the code version is the branch writes' when they agree
	// OldSpec, when set, returns what decides the fate of main's data
	// files of older partition specs that may hold rows of the published
	// parts (see [Request].OldSpec). It is called again when an attempt
	// publishes other parts than the one before. Nil fails a publish that
	// meets such files with [commit.ErrUnsupported].
	OldSpec func(spec *partition.Spec, parts []Part) OldSpecFunc
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
	pr.Spec = nil
	op := &publishOp{pr: &pr, cat: cat, decided: newDecisions(), cache: newManifestCache()}
	l := &loop{cat: cat, t: &pr.Target, op: op}
	defer func() { op.decided.release(ctx, l.last, err) }()
	return l.run(ctx, commit.Result{})
}

// publishOp is the [operation] of a [PublishRequest]. Each attempt plans
// the publish on its base and, when it re-plans, makes a fresh [Request]
// of the branch's parts, whose replacement it validates and applies.
type publishOp struct {
	pr      *PublishRequest
	cat     catalog.Catalog // reloads the table when a file is gone while planning
	decided *decisions      // OldSpec's decisions for the parts of sig
	sig     string          // the spec and keys decided was made for
	oldSpec OldSpecFunc     // pr.OldSpec's for the parts of sig
	cache   *manifestCache  // manifests read, kept across attempts

	// What validate planned on the attempt's base, which apply commits.
	plan   publishPlan
	ff     bool         // a fast-forward of main's ref
	parts  []string     // the published partitions, sorted
	rows   int64        // the rows they hold on the branch
	replan *replacement // the re-planned publish; nil for a fast-forward or nothing to publish
}

// validate plans the publish on tbl (main as the catalog holds it): what
// the branch's writes since its base are, and either a fast-forward or a
// replacement of their partitions on main, which must not conflict with
// what main replaced since the base (unless Force).
func (o *publishOp) validate(ctx context.Context, tbl *icetable.Table) error {
	pr := o.pr
	o.ff, o.parts, o.rows, o.replan = false, nil, 0, nil
	md := tbl.Metadata()
	ref, ok := Ref(md, pr.Branch)
	if !ok {
		return fmt.Errorf("%w: %s", commit.ErrNoSuchBranch, pr.Branch)
	}
	view, err := atSnapshot(tbl, pr.Branch, ref)
	if err != nil {
		return err
	}
	pl, err := planPublish(md, pr.Branch, view.CurrentSnapshot())
	if err != nil {
		return err
	}
	o.plan, o.parts = pl, slices.Sorted(maps.Keys(pl.records))
	if len(pl.records) == 0 {
		return nil
	}
	if sameSnapshot(tbl.CurrentSnapshot(), pl.base) && (pl.forked || pl.base == nil) {
		o.ff = true
		return nil
	}

	// Re-planned: the branch's keys are planned on main's current spec.
	if err := pl.sameSpec(md, pr.Branch); err != nil {
		return err
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return err
	}
	keys := make(map[partition.Key]bool, len(o.parts))
	for _, k := range o.parts {
		pk, err := partition.ParseKey(tbl.Spec(), tbl.Schema(), k)
		if err != nil {
			return fmt.Errorf("branch %s: partition %s: %w", pr.Branch, k, err)
		}
		keys[pk] = true
	}
	onBranch, err := planFiles(ctx, view, spec, keys, o.cache)
	if err != nil {
		return movedWhilePlanning(ctx, o.cat, tbl, err)
	}
	// Older-spec files the branch still lists hold no row of the keys:
	// the branch's icerun writes deleted or rewrote those that did.
	if !pr.Force {
		if err := o.conflicts(ctx, tbl, spec, keys, pl.base); err != nil {
			var pc *commit.PublishConflictError
			if errors.As(err, &pc) {
				return err
			}
			return movedWhilePlanning(ctx, o.cat, tbl, err)
		}
	}
	if err := carriedDeletes(pr.Branch, onBranch.current); err != nil {
		return err
	}

	// The commit requires the branch head it re-planned from, as a
	// fast-forward does: a branch dropped (and its files expired) or moved
	// since is planned again.
	head := pl.head.SnapshotID
	req := &Request{
		Target:       Target{Op: pr.Op, Ident: pr.Ident, Spec: spec, SchemaID: tbl.Schema().ID, Token: pr.Token},
		Lineage:      Lineage{RunID: pr.Lineage.RunID, CodeVersion: pl.codeVersion(pr.Lineage.CodeVersion), SchemaID: tbl.Schema().ID},
		summaryExtra: iceberg.Properties{commit.SummaryPublishedBranch: pr.Branch, commit.SummaryPublishedHead: strconv.FormatInt(head, 10)},
		extraReqs:    []icetable.Requirement{icetable.AssertRefSnapshotID(pr.Branch, &head)},
	}
	for k := range keys {
		rows := liveRows(onBranch.current[k])
		req.Parts = append(req.Parts, Part{Key: k, Files: onBranch.current[k], Fingerprint: pl.records[k.String()].Fingerprint, Rows: rows})
		o.rows += rows
	}
	slices.SortFunc(req.Parts, func(a, b Part) int { return strings.Compare(a.Key.String(), b.Key.String()) })
	if sig := strconv.Itoa(spec.ID()) + ":" + strings.Join(o.parts, ","); sig != o.sig {
		// Other parts than the previous attempt's: its decisions and
		// rewrites do not hold for these.
		_ = o.decided.removeUnused(context.WithoutCancel(ctx), tbl, false)
		o.sig, o.decided, o.oldSpec = sig, newDecisions(), nil
		if pr.OldSpec != nil {
			o.oldSpec = pr.OldSpec(spec, req.Parts)
		}
	}
	req.OldSpec = o.oldSpec
	o.replan = newReplacement(req, o.decided, o.cache)
	return o.replan.validate(ctx, tbl)
}

// apply commits what validate planned: nothing, a fast-forward, or the
// replacement of the branch's partitions on main.
func (o *publishOp) apply(ctx context.Context, tbl *icetable.Table, res *commit.Result) (*change, error) {
	*res = commit.Result{Attempts: res.Attempts, Partitions: o.parts, AddedRows: o.rows}
	switch {
	case len(o.parts) == 0:
		return nil, nil
	case o.ff:
		return o.fastForward(tbl), nil
	}
	return o.replan.apply(ctx, tbl, res)
}

// conflicts fails with a *PublishConflictError when main replaced one of
// keys after base: the partition's files on main now differ from base's.
func (o *publishOp) conflicts(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys map[partition.Key]bool, base *icetable.Snapshot) error {
	pr := o.pr
	now, err := planFiles(ctx, tbl, spec, keys, o.cache)
	if err != nil {
		return err
	}
	then := plan{current: map[partition.Key][]iceberg.DataFile{}}
	if base != nil {
		at, err := atSnapshot(tbl, "base of "+pr.Branch, icetable.SnapshotRef{SnapshotID: base.SnapshotID, SnapshotRefType: icetable.BranchRef})
		if err != nil {
			return err
		}
		if then, err = planFiles(ctx, at, spec, keys, o.cache); err != nil {
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
	return &commit.PublishConflictError{Branch: pr.Branch, Partitions: both}
}

// movedWhilePlanning classifies err, a failure to read the files of the
// state tbl (as loaded for this attempt) holds: a file that is gone while
// the table moved since (a branch dropped and its snapshots expired, or
// main's) is a conflict, planned again on the new state; anything else
// ends the call.
func movedWhilePlanning(ctx context.Context, cat catalog.Catalog, tbl *icetable.Table, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	now, lerr := cat.LoadTable(ctx, tbl.Identifier())
	if lerr != nil || now.MetadataLocation() == tbl.MetadataLocation() {
		return err
	}
	return fmt.Errorf("%w: the table moved while the publish read its files: %w", errCommitFailed, err)
}

// fastForward is the change that moves main's ref to the branch's head.
func (o *publishOp) fastForward(tbl *icetable.Table) *change {
	pl := o.plan
	var base *int64
	if pl.base != nil {
		base = &pl.base.SnapshotID
	}
	head := pl.head.SnapshotID
	return &change{
		reqs: []icetable.Requirement{
			icetable.AssertTableUUID(tbl.Metadata().TableUUID()),
			icetable.AssertRefSnapshotID(icetable.MainBranch, base),
			icetable.AssertRefSnapshotID(o.pr.Branch, &head),
		},
		updates:  []icetable.Update{setBranch(tbl.Metadata(), icetable.MainBranch, head)},
		snapshot: head,
		landed: func(md icetable.Metadata) *icetable.Snapshot {
			if s := md.CurrentSnapshot(); s != nil && s.SnapshotID == head {
				return s
			}
			return nil
		},
	}
}

func sameSnapshot(a, b *icetable.Snapshot) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.SnapshotID == b.SnapshotID
}

// DropBranchRequest removes a branch's ref.
type DropBranchRequest struct {
	Target
	Branch string
}

// DropBranch removes the ref of dr.Branch from the table; its snapshots
// stay until they are expired. Conflicts are retried like [Replace]'s; an
// error that may have been applied is resolved by looking for the ref.
func DropBranch(ctx context.Context, cat catalog.Catalog, dr DropBranchRequest) error {
	dr.Spec = nil
	l := &loop{cat: cat, t: &dr.Target, op: dropBranch(dr.Branch)}
	_, err := l.run(ctx, commit.Result{})
	return err
}

// dropBranch is the [operation] of a [DropBranchRequest]: the branch it
// removes.
type dropBranch string

// validate fails when the branch is not there, or is a tag.
func (b dropBranch) validate(_ context.Context, tbl *icetable.Table) error {
	ref, ok := Ref(tbl.Metadata(), string(b))
	if !ok {
		return fmt.Errorf("%w: %s", commit.ErrNoSuchBranch, string(b))
	}
	if ref.SnapshotRefType != icetable.BranchRef {
		return fmt.Errorf("%w: ref %q is a %s, not a branch", commit.ErrUnsupported, string(b), ref.SnapshotRefType)
	}
	return nil
}

// apply is the removal of the ref, required to be where it is in tbl.
func (b dropBranch) apply(_ context.Context, tbl *icetable.Table, _ *commit.Result) (*change, error) {
	ref, _ := Ref(tbl.Metadata(), string(b))
	return &change{
		reqs: []icetable.Requirement{
			icetable.AssertTableUUID(tbl.Metadata().TableUUID()),
			icetable.AssertRefSnapshotID(string(b), &ref.SnapshotID),
		},
		updates: []icetable.Update{icetable.NewRemoveSnapshotRefUpdate(string(b))},
		landed: func(md icetable.Metadata) *icetable.Snapshot {
			if _, ok := Ref(md, string(b)); !ok {
				return &icetable.Snapshot{} // gone: the drop landed
			}
			return nil
		},
	}, nil
}
