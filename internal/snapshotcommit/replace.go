package snapshotcommit

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
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
	// Remove, when set, are the files of Key the replacement removes (a
	// rewrite of some of its files: data files and the delete files that
	// apply only to them); the partition's other files stay, and Files
	// are added beside them. Nil removes every file of Key. Each attempt
	// fails with [ErrFilesGone] when one of them is no longer live; a
	// caller that must know the rest of the partition is unchanged too
	// checks it in [Request].Verify.
	Remove []iceberg.DataFile
}

// removed are the files of cur, the live files of part's partition,
// that part's replacement removes, and those that stay.
func (part Part) removed(cur []iceberg.DataFile) (del, kept []iceberg.DataFile) {
	if part.Remove == nil {
		return cur, nil
	}
	gone := make(map[string]bool, len(part.Remove))
	for _, f := range part.Remove {
		gone[fileID(f)] = true
	}
	for _, f := range cur {
		if !gone[fileID(f)] {
			kept = append(kept, f)
		}
	}
	return part.Remove, kept
}

// Request is one atomic replacement of one or more partitions.
type Request struct {
	Target
	Parts   []Part
	Kind    Kind // the Java operation the commit is, for its summary
	Lineage Lineage
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

	summaryExtra iceberg.Properties     // more summary properties (a publish's)
	extraReqs    []icetable.Requirement // more requirements of the commit (a publish's branch head)
}

// ref is the branch req commits to.
func (req *Request) ref() string {
	if req.Branch == "" {
		return icetable.MainBranch
	}
	return req.Branch
}

// Replace commits req: one snapshot in which every partition of req.Parts
// holds exactly its new files (with [Part].Remove: its new files beside
// those it keeps). See the package documentation for the loop.
//
// On error the caller owns req's files: it removes them, except after an
// *UnknownOutcomeError. The replacement files of older-spec decisions
// (req.OldSpec) belong to Replace: when it returns, those that the table
// does not reference are removed, whatever the outcome.
func Replace(ctx context.Context, cat catalog.Catalog, req Request) (res commit.Result, err error) {
	r := newReplacement(&req, newDecisions(), newManifestCache()) // decisions and manifests kept across attempts
	l := &loop{cat: cat, t: &req.Target, branch: req.Branch, op: r}
	defer func() { r.decided.release(ctx, l.last, err) }()
	for _, p := range req.Parts {
		res.Partitions = append(res.Partitions, p.Key.String())
		res.AddedRows += p.Rows
	}
	slices.Sort(res.Partitions)
	return l.run(ctx, res)
}

// replacement is the [operation] of a [Request].
type replacement struct {
	req     *Request
	keys    map[partition.Key]bool
	decided *decisions     // older-spec decisions, kept across attempts
	cache   *manifestCache // manifests read, kept across attempts
	plan    plan           // validate's plan of the attempt's base, which apply stages
}

func newReplacement(req *Request, decided *decisions, cache *manifestCache) *replacement {
	keys := make(map[partition.Key]bool, len(req.Parts))
	for _, p := range req.Parts {
		keys[p.Key] = true
	}
	return &replacement{req: req, keys: keys, decided: decided, cache: cache}
}

// validate plans which files the replaced partitions hold on tbl and
// checks req.Verify and that older-spec files can be decided.
func (r *replacement) validate(ctx context.Context, tbl *icetable.Table) error {
	p, err := planFiles(ctx, tbl, r.req.Spec, r.keys, r.cache)
	if err != nil {
		return err
	}
	r.plan = p
	if r.req.Verify != nil {
		if err := r.req.Verify(tbl, p.current); err != nil {
			return err
		}
	}
	if len(p.old) > 0 && r.req.OldSpec == nil {
		f := p.old[0].File
		return fmt.Errorf("%w: data file %s was written under spec %d", commit.ErrUnsupported, f.FilePath(), f.SpecID())
	}
	return nil
}

// apply stages the replacement planned by validate: nil when every part
// (with SkipHeld: each part) already holds its input.
func (r *replacement) apply(ctx context.Context, tbl *icetable.Table, res *commit.Result) (*change, error) {
	req, p := r.req, r.plan
	var del, add []iceberg.DataFile
	r.decided.begin()
	for _, t := range p.old {
		d, err := r.decided.decide(ctx, tbl, t, req.OldSpec)
		if err != nil {
			return nil, err
		}
		if d.Delete {
			del = append(del, t.File)
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
	var left [][]iceberg.DataFile // the files of each part's partition once committed
	res.PerPartition = nil
	for _, part := range req.Parts {
		cur := p.current[part.Key]
		held := eligible && req.holds(recorded, part, cur)
		if req.SkipHeld && held {
			res.PerPartition = append(res.PerPartition, commit.PartitionResult{Key: part.Key.String(), Unchanged: true})
			continue
		}
		unchanged = unchanged && held
		gone, kept := part.removed(cur)
		del = append(del, gone...)
		add = append(add, part.Files...)
		parts = append(parts, part)
		left = append(left, append(slices.Clip(kept), part.Files...))
	}
	if unchanged || (len(del) == 0 && len(add) == 0) {
		return nil, nil
	}
	res.Partitions, res.AddedRows = nil, 0
	fps, files := make([]string, len(parts)), make([]string, len(parts))
	for i, part := range parts {
		fps[i], files[i] = part.Fingerprint, filesHash(left[i])
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
		var err error
		if setProps, err = req.TableProperties(tbl.Metadata()); err != nil {
			return nil, err
		}
	}
	sum, setProps, err := stamp(ctx, &req.Target, tbl, summaryOf(req.Lineage, req.Token, req.Spec, req.summaryExtra, parts, fps, files), setProps)
	if err != nil {
		return nil, err
	}
	st, err := stage(ctx, tbl, req.ref(), req.Kind, del, add, sum, setProps, r.cache)
	if err != nil {
		return nil, err
	}
	ch := st.change(req.files())
	ch.reqs = append(ch.reqs, req.extraReqs...)
	return ch, nil
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

// summaryOf is the snapshot summary of a commit of parts (a request's
// parts, or those not skipped) with their fingerprints and file hashes,
// by the run of lin, with the commit token and, when spec is set, its id.
func summaryOf(lin Lineage, token string, spec *partition.Spec, extra iceberg.Properties, parts []Part, fps, files []string) iceberg.Properties {
	keys := make([]string, len(parts))
	var rows int64
	for i, p := range parts {
		keys[i] = p.Key.String()
		rows += p.Rows
	}
	out := iceberg.Properties{
		commit.SummaryPartitions:            strings.Join(keys, ","),
		commit.SummaryRunID:                 lin.RunID,
		commit.SummaryCodeVersion:           lin.CodeVersion,
		commit.SummarySchemaID:              strconv.Itoa(lin.SchemaID),
		commit.SummaryInputFingerprint:      combine(fps),
		commit.SummaryRows:                  strconv.FormatInt(rows, 10),
		commit.SummaryCommitToken:           token,
		commit.SummaryPartitionFingerprints: strings.Join(fps, ","),
		commit.SummaryPartitionFiles:        strings.Join(files, ","),
	}
	for k, v := range extra {
		out[k] = v
	}
	if spec != nil {
		out[commit.SummaryPartitionSpecID] = strconv.Itoa(spec.ID())
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
