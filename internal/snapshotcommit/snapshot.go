package snapshotcommit

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// Manifest layout. icerun writes its own snapshots (iceberg-go v0.7.0's
// overwrite reads every entry of every manifest of the table twice and
// rewrites each manifest that loses a file, so replacing one partition
// costs O(table)). Here a commit reads only the manifests whose partition
// summaries may list a deleted file, and keeps manifests small and
// clustered by partition so that those are few:
//   - new files go to new manifests, sorted by partition, at most
//     ManifestEntries entries each;
//   - once MergeSmallManifests manifests of the current spec hold fewer
//     than ManifestEntries/2 live files each, they are merged into full
//     ones, sorted by partition.
//
// A commit's manifest work is bounded by the manifests of the replaced
// partitions, not by the size of the table.
const (
	ManifestEntries     = 128
	MergeSmallManifests = 8
)

// ErrFilesGone is the failure of a commit that removes files the table
// no longer holds: another writer removed them since they were planned
// (a concurrent compaction of the same partition). Nothing is committed.
var ErrFilesGone = errors.New("commit: files to delete are no longer in the table")

// staged is one snapshot written to storage but not committed.
type staged struct {
	snap    *icetable.Snapshot
	updates []icetable.Update
	reqs    []icetable.Requirement
	written []string // every file written for it (manifests, manifest list)
}

// producer writes the manifests and manifest list of one snapshot of tbl.
type producer struct {
	tbl     *icetable.Table
	md      icetable.Metadata
	fs      iceio.WriteFileIO
	locs    icetable.LocationProvider
	id      int64  // the new snapshot's id
	seq     int64  // its sequence number (0 on format v1)
	commit  string // names its files
	written []string
	specs   map[int32]*partition.Spec
	cache   *manifestCache     // manifests already read; nil reads every one
	removed []iceberg.DataFile // files the snapshot removes (data and delete files)
	// replaced counts the current snapshot's manifests the new one
	// replaces: rewritten without removed files, or merged.
	replaced int
}

// stage writes one snapshot of tbl, as branch ref sees it ([OnBranch]),
// that removes del (data files listed in tbl's current snapshot) and adds
// add (data files of the current spec), a commit of kind with summary
// properties props, and returns it with the catalog updates and
// requirements that commit it (setProps set in the same commit). The
// commit requires that ref, the schema and the spec have not moved. On
// error the files already written are removed.
//
// cache holds the manifest lists and entries already read, reused instead
// of reading them again, and keeps those this commit reads.
func stage(ctx context.Context, tbl *icetable.Table, ref string, kind Kind, del, add []iceberg.DataFile, props, setProps iceberg.Properties, cache *manifestCache) (_ *staged, err error) {
	p, err := newProducer(ctx, tbl)
	if err != nil {
		return nil, err
	}
	p.cache = cache
	defer func() {
		if err != nil {
			err = errors.Join(err, p.remove())
		}
	}()
	// Added delete files (a publish carries a branch's position deletes
	// and deletion vectors with its data files) go to delete manifests.
	pend, dpend := newPending(), newPending()
	for _, f := range add {
		e := iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &p.id, nil, nil, f)
		if f.ContentType() == iceberg.EntryContentData {
			pend.current = append(pend.current, e)
		} else {
			dpend.current = append(dpend.current, e)
		}
	}
	named := nameFiles(p, del)
	kept, deletes, err := p.filter(named, pend)
	if err != nil {
		return nil, err
	}
	if kept, err = p.mergeSmall(kept, pend); err != nil {
		return nil, err
	}
	for i, mf := range kept {
		kept[i] = p.repaired(mf)
	}
	written, err := p.write(pend)
	if err != nil {
		return nil, err
	}
	manifests := append(written, kept...)
	mc := manifestCounts{created: len(written), kept: len(kept)}
	if len(deletes) > 0 || len(dpend.current) > 0 {
		drop := &deleteDrop{minDataSeq: minDataSequence(p.md, manifests)}
		if p.md.Version() >= 3 {
			drop.deadData = make(map[string]bool, len(p.removed))
			for _, f := range p.removed {
				drop.deadData[f.FilePath()] = true
			}
		}
		keptDeletes, err := p.filterDeletes(deletes, named, drop, dpend)
		if err != nil {
			return nil, err
		}
		writtenDeletes, err := p.writeDeletes(dpend)
		if err != nil {
			return nil, err
		}
		manifests = append(append(manifests, writtenDeletes...), keptDeletes...)
		mc.created += len(writtenDeletes)
		mc.kept += len(keptDeletes)
	}
	if len(named.want) > 0 {
		return nil, fmt.Errorf("%w: %d of them are not in the table's manifests", ErrFilesGone, len(named.want))
	}
	mc.replaced = p.replaced
	snap, err := p.writeList(manifests, p.summary(kind, props, add, p.removed, mc))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.staged(snap, ref, setProps), nil
}

// staged is snap, written by p, with the catalog updates and
// requirements that commit it onto ref (setProps set in the same
// commit): ref, the schema and the spec must not have moved.
func (p *producer) staged(snap *icetable.Snapshot, ref string, setProps iceberg.Properties) *staged {
	var base *int64 // ref's snapshot; nil when ref does not exist yet
	switch r, ok := Ref(p.md, ref); {
	case ref == icetable.MainBranch:
		if cur := p.md.CurrentSnapshot(); cur != nil {
			base = &cur.SnapshotID
		}
	case ok:
		base = &r.SnapshotID
	}
	st := &staged{
		snap: snap,
		updates: []icetable.Update{
			icetable.NewAddSnapshotUpdate(snap),
			setBranch(p.md, ref, snap.SnapshotID),
		},
		reqs: []icetable.Requirement{
			icetable.AssertTableUUID(p.md.TableUUID()),
			icetable.AssertRefSnapshotID(ref, base),
			icetable.AssertCurrentSchemaID(p.md.CurrentSchema().ID),
			icetable.AssertDefaultSpecID(p.md.DefaultPartitionSpec()),
		},
		written: p.written,
	}
	if snap.ParentSnapshotID == nil {
		st.reqs = append(st.reqs, rootGuards(p.md, ref)...)
	}
	if len(setProps) > 0 {
		st.updates = append(st.updates, icetable.NewSetPropertiesUpdate(setProps))
	}

	return st
}

func newProducer(ctx context.Context, tbl *icetable.Table) (*producer, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("%w: table file IO %T cannot write", commit.ErrUnsupported, fsys)
	}
	locs, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	md := tbl.Metadata()
	p := &producer{tbl: tbl, md: md, fs: wfs, locs: locs, commit: uuid.NewString(), specs: map[int32]*partition.Spec{}}
	p.id = newSnapshotID(md)
	if md.Version() >= 2 {
		p.seq = md.LastSequenceNumber() + 1
	}

	return p, nil
}

// newSnapshotID is a random positive id no snapshot of md has.
func newSnapshotID(md icetable.Metadata) int64 {
	for {
		u := uuid.New()
		id := int64((binary.BigEndian.Uint64(u[:8]) ^ binary.BigEndian.Uint64(u[8:])) & math.MaxInt64)
		if id != 0 && md.SnapshotByID(id) == nil {
			return id
		}
	}
}

// spec is the compiled partition spec id of the table, or nil when it
// cannot be compiled against the current schema (its source column was
// dropped): callers then read instead of pruning.
func (p *producer) spec(id int32) *partition.Spec {
	if s, ok := p.specs[id]; ok {
		return s
	}
	var s *partition.Spec
	if ps := p.md.PartitionSpecByID(int(id)); ps != nil {
		s, _ = partition.NewSpec(*ps, p.md.CurrentSchema())
	}
	p.specs[id] = s

	return s
}

// pending is what a commit writes: entries of the default spec (added,
// kept from rewritten manifests, merged), survivors of rewritten manifests
// of older specs, and the deleted entries (tombstones) by spec. Data and
// delete entries go to separate pendings.
type pending struct {
	current    []iceberg.ManifestEntry
	older      map[int32][][]iceberg.ManifestEntry
	tombstones map[int32][]iceberg.ManifestEntry
}

func newPending() *pending {
	return &pending{older: map[int32][][]iceberg.ManifestEntry{}, tombstones: map[int32][]iceberg.ManifestEntry{}}
}

// named are the files a commit was asked to remove, by fileID, with their
// partition keys by spec for pruning manifests. Found files are removed
// from want.
type named struct {
	want map[string]bool
	keys map[int32][]partition.Key
}

func nameFiles(p *producer, del []iceberg.DataFile) *named {
	n := &named{want: make(map[string]bool, len(del)), keys: make(map[int32][]partition.Key)}
	for _, f := range del {
		n.want[fileID(f)] = true
		k := partition.Key{} // invalid: never prunes
		if s := p.spec(f.SpecID()); s != nil {
			k, _ = s.KeyFromValues(f.Partition())
		}
		n.keys[f.SpecID()] = append(n.keys[f.SpecID()], k)
	}

	return n
}

// filter returns the current snapshot's data manifests that stay as they
// are, and moves the entries of those that list a file of n to pend: a
// manifest is read only when its partition summaries may list one.
// Manifests without live files (the tombstones of an earlier commit) are
// dropped. The delete manifests with live files are returned apart, for
// filterDeletes.
func (p *producer) filter(n *named, pend *pending) (kept, deletes []iceberg.ManifestFile, err error) {
	cur := p.md.CurrentSnapshot()
	if cur == nil {
		if len(n.want) > 0 {
			return nil, nil, errors.New("files to delete, but the table has no snapshot")
		}
		return nil, nil, nil
	}
	manifests, err := p.cache.manifests(p.fs, cur)
	if err != nil {
		return nil, nil, err
	}
	kept = make([]iceberg.ManifestFile, 0, len(manifests))
	for _, mf := range manifests {
		switch {
		case !mf.HasAddedFiles() && !mf.HasExistingFiles():
			continue
		case mf.ManifestContent() != iceberg.ManifestContentData:
			deletes = append(deletes, mf)
			continue
		case len(n.want) == 0 || !mayList(p.spec(mf.PartitionSpecID()), mf, n.keys[mf.PartitionSpecID()]):
			kept = append(kept, mf)
			continue
		}
		rewritten, err := p.rewrite(mf, pend, func(e iceberg.ManifestEntry) bool { return n.take(e.DataFile()) })
		if err != nil {
			return nil, nil, err
		}
		if !rewritten {
			kept = append(kept, mf)
		}
	}

	return kept, deletes, nil
}

// take reports whether f is one of the named files, and marks it found.
func (n *named) take(f iceberg.DataFile) bool {
	id := fileID(f)
	if !n.want[id] {
		return false
	}
	delete(n.want, id)

	return true
}

// filterDeletes returns the delete manifests that stay as they are, and
// moves the entries of those that list a named delete file or one that
// drop removes to pend.
func (p *producer) filterDeletes(manifests []iceberg.ManifestFile, n *named, drop *deleteDrop, pend *pending) ([]iceberg.ManifestFile, error) {
	var kept []iceberg.ManifestFile
	for _, mf := range manifests {
		spec, keys := p.spec(mf.PartitionSpecID()), n.keys[mf.PartitionSpecID()]
		if !(len(keys) > 0 && mayList(spec, mf, keys)) && mf.MinSequenceNum() >= drop.minDataSeq {
			kept = append(kept, mf)
			continue
		}
		rewritten, err := p.rewrite(mf, pend, func(e iceberg.ManifestEntry) bool { return n.take(e.DataFile()) || drop.drops(e) })
		if err != nil {
			return nil, err
		}
		if !rewritten {
			kept = append(kept, mf)
		}
	}

	return kept, nil
}

// rewrite moves the live entries of mf to pend, the ones gone reports as
// tombstones, unless none is gone: then it reports false and mf stays.
func (p *producer) rewrite(mf iceberg.ManifestFile, pend *pending, gone func(iceberg.ManifestEntry) bool) (bool, error) {
	entries, err := p.entries(mf)
	if err != nil {
		return false, err
	}
	var keep, dead []iceberg.ManifestEntry
	for _, e := range entries {
		if gone(e) {
			seq := e.SequenceNum()
			dead = append(dead, iceberg.NewManifestEntry(iceberg.EntryStatusDELETED, &p.id, &seq, e.FileSequenceNum(), e.DataFile()))
			p.removed = append(p.removed, e.DataFile())
			continue
		}
		keep = append(keep, existing(e))
	}
	if len(dead) == 0 {
		return false, nil
	}
	p.replaced++
	spec := mf.PartitionSpecID()
	pend.tombstones[spec] = append(pend.tombstones[spec], dead...)
	switch {
	case len(keep) == 0:
	case spec == int32(p.md.DefaultPartitionSpec()):
		pend.current = append(pend.current, keep...)
	default:
		pend.older[spec] = append(pend.older[spec], keep)
	}

	return true, nil
}

// entries are the live entries of mf.
func (p *producer) entries(mf iceberg.ManifestFile) ([]iceberg.ManifestEntry, error) {
	return p.cache.live(p.fs, mf)
}

// existing is e restated as an EXISTING entry of a rewritten manifest,
// with its inherited snapshot id and sequence numbers written out.
func existing(e iceberg.ManifestEntry) iceberg.ManifestEntry {
	id, seq := e.SnapshotID(), e.SequenceNum()

	return iceberg.NewManifestEntry(iceberg.EntryStatusEXISTING, &id, &seq, e.FileSequenceNum(), e.DataFile())
}

// mergeSmall moves the entries of kept's small data manifests of the
// default spec (fewer than ManifestEntries/2 live files) into pend once
// they and pend's would make MergeSmallManifests manifests, and returns
// the manifests kept as they are.
func (p *producer) mergeSmall(kept []iceberg.ManifestFile, pend *pending) ([]iceberg.ManifestFile, error) {
	specID := int32(p.md.DefaultPartitionSpec())
	var small, rest []iceberg.ManifestFile
	for _, mf := range kept {
		live := int(mf.AddedDataFiles()) + int(mf.ExistingDataFiles())
		if mf.ManifestContent() == iceberg.ManifestContentData && mf.PartitionSpecID() == specID && live < ManifestEntries/2 {
			small = append(small, mf)
			continue
		}
		rest = append(rest, mf)
	}
	if len(small)+1 < MergeSmallManifests {
		return kept, nil
	}
	p.replaced += len(small)
	for _, mf := range small {
		entries, err := p.entries(mf)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			pend.current = append(pend.current, existing(e))
		}
	}

	return rest, nil
}

// write writes pend's data manifests.
func (p *producer) write(pend *pending) ([]iceberg.ManifestFile, error) {
	return p.writePending(pend, iceberg.ManifestContentData)
}

// writeDeletes writes pend's delete manifests.
func (p *producer) writeDeletes(pend *pending) ([]iceberg.ManifestFile, error) {
	return p.writePending(pend, iceberg.ManifestContentDeletes)
}

func (p *producer) writePending(pend *pending, content iceberg.ManifestContent) ([]iceberg.ManifestFile, error) {
	out, err := p.writeChunks(int32(p.md.DefaultPartitionSpec()), pend.current, content)
	if err != nil {
		return nil, err
	}
	for _, spec := range slices.Sorted(maps.Keys(pend.older)) {
		for _, entries := range pend.older[spec] {
			mf, err := p.writeManifest(spec, entries, content)
			if err != nil {
				return nil, err
			}
			out = append(out, mf)
		}
	}
	for _, spec := range slices.Sorted(maps.Keys(pend.tombstones)) {
		mf, err := p.writeManifest(spec, pend.tombstones[spec], content)
		if err != nil {
			return nil, err
		}
		out = append(out, mf)
	}

	return out, nil
}

// writeChunks writes entries of spec specID, sorted by partition, into
// manifests of at most ManifestEntries entries.
func (p *producer) writeChunks(specID int32, entries []iceberg.ManifestEntry, content iceberg.ManifestContent) ([]iceberg.ManifestFile, error) {
	if s := p.spec(specID); s != nil {
		keyOf := make(map[string]partition.Key, len(entries)) // by fileID
		var keys []partition.Key
		for _, e := range entries {
			if k, err := s.KeyFromValues(e.DataFile().Partition()); err == nil {
				keyOf[fileID(e.DataFile())] = k
				keys = append(keys, k)
			}
		}
		s.SortKeys(keys)
		rank := make(map[partition.Key]int, len(keys))
		for i, k := range keys {
			if _, ok := rank[k]; !ok {
				rank[k] = i
			}
		}
		slices.SortStableFunc(entries, func(a, b iceberg.ManifestEntry) int {
			ra, okA := rank[keyOf[fileID(a.DataFile())]]
			rb, okB := rank[keyOf[fileID(b.DataFile())]]
			if !okA || !okB {
				return cmp.Compare(boolInt(okA), boolInt(okB))
			}
			return cmp.Compare(ra, rb)
		})
	}
	var out []iceberg.ManifestFile
	for chunk := range slices.Chunk(entries, ManifestEntries) {
		mf, err := p.writeManifest(specID, chunk, content)
		if err != nil {
			return nil, err
		}
		out = append(out, mf)
	}

	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}

	return 0
}

// writeManifest writes one manifest of spec specID with entries of
// content (data or deletes).
func (p *producer) writeManifest(specID int32, entries []iceberg.ManifestEntry, content iceberg.ManifestContent) (_ iceberg.ManifestFile, err error) {
	spec := p.md.PartitionSpecByID(int(specID))
	if spec == nil {
		return nil, fmt.Errorf("partition spec %d is not in the table", specID)
	}
	path := p.locs.NewMetadataLocation(fmt.Sprintf("%s-m%d.avro", p.commit, len(p.written)))
	out, err := p.create(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	cnt := &countingWriter{w: out}
	w, err := iceberg.NewManifestWriter(p.md.Version(), cnt, *spec, p.md.CurrentSchema(), p.id, iceberg.WithManifestWriterContent(content))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		switch e.Status() {
		case iceberg.EntryStatusADDED:
			err = w.Add(e)
		case iceberg.EntryStatusEXISTING:
			err = w.Existing(e)
		default:
			err = w.Delete(e)
		}
		if err != nil {
			_ = w.Close()
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	mf, err := w.ToManifestFile(path, cnt.n)
	if err != nil {
		return nil, err
	}

	return p.summarised(mf, entries), nil
}

// countingWriter counts the bytes written through it: the manifest's
// length in the manifest list.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)

	return n, err
}

// summarised is mf, a manifest just written with entries, with the
// partition field summaries the spec defines ([partition.Spec.Summaries]).
// iceberg-go v0.7.0 writes a null lower bound for an empty string (Java
// readers then skip every partition of the manifest in filtered scans),
// and orders -0.0 and +0.0 as equal. mf is kept as it is when its spec
// cannot be compiled against the current schema.
func (p *producer) summarised(mf iceberg.ManifestFile, entries []iceberg.ManifestEntry) iceberg.ManifestFile {
	s := p.spec(mf.PartitionSpecID())
	if s == nil {
		return mf
	}
	parts := make([]map[int]any, len(entries))
	for i, e := range entries {
		parts[i] = e.DataFile().Partition()
	}
	sums, err := s.Summaries(parts)
	if err != nil {
		return mf
	}

	return withSummaries(mf, sums)
}

// repaired is mf, a manifest the new snapshot keeps from its parent, with
// the empty-value lower bounds its writer left null restored
// ([partition.Spec.RepairSummaries]), so that the manifest list this
// commit writes is readable by Java's filtered scans even for manifests
// written before icerun wrote its own summaries, or by other writers.
func (p *producer) repaired(mf iceberg.ManifestFile) iceberg.ManifestFile {
	s := p.spec(mf.PartitionSpecID())
	if s == nil || mf.ManifestContent() != iceberg.ManifestContentData ||
		mf.AddedDataFiles()+mf.ExistingDataFiles()+mf.DeletedDataFiles() == 0 {
		return mf
	}
	sums, changed := s.RepairSummaries(mf.Partitions())
	if !changed {
		return mf
	}

	return withSummaries(mf, sums)
}

// withSummaries is mf with partition field summaries sums. A manifest
// with a first_row_id (format v3, already in a manifest list) is returned
// as it is: iceberg-go's ManifestBuilder cannot carry it over, and the
// list writer would assign the kept rows new row ids.
func withSummaries(mf iceberg.ManifestFile, sums []iceberg.FieldSummary) iceberg.ManifestFile {
	if mf.FirstRowID() != nil {
		return mf
	}
	return iceberg.NewManifestFile(mf.Version(), mf.FilePath(), mf.Length(), mf.PartitionSpecID(), mf.SnapshotID()).
		SequenceNum(mf.SequenceNum(), mf.MinSequenceNum()).
		Content(mf.ManifestContent()).
		AddedFiles(mf.AddedDataFiles()).ExistingFiles(mf.ExistingDataFiles()).DeletedFiles(mf.DeletedDataFiles()).
		AddedRows(mf.AddedRows()).ExistingRows(mf.ExistingRows()).DeletedRows(mf.DeletedRows()).
		Partitions(sums).
		KeyMetadata(mf.KeyMetadata()).
		Build()
}

// create creates path, recording it first so that a partial file is
// removed too.
func (p *producer) create(path string) (iceio.FileWriter, error) {
	p.written = append(p.written, path)

	return p.fs.Create(path)
}

// writeList writes the manifest list and returns the snapshot.
func (p *producer) writeList(manifests []iceberg.ManifestFile, sum *icetable.Summary) (_ *icetable.Snapshot, err error) {
	var parent *int64
	if cur := p.md.CurrentSnapshot(); cur != nil {
		parent = &cur.SnapshotID
	}
	path := p.locs.NewMetadataLocation(fmt.Sprintf("snap-%d-1-%s.avro", p.id, p.commit))
	out, err := p.create(path)
	if err != nil {
		return nil, err
	}
	lineage, err := p.writeManifestList(out, parent, manifests)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	schemaID := p.md.CurrentSchema().ID
	// Iceberg's snapshot timestamp is the commit's wall time; it never
	// decides where rows go. Kept monotonic with the table's last update.
	ts := max(time.Now().UnixMilli(), p.md.LastUpdatedMillis())

	snap := &icetable.Snapshot{
		SnapshotID:       p.id,
		ParentSnapshotID: parent,
		SequenceNumber:   p.seq,
		TimestampMs:      ts,
		ManifestList:     path,
		Summary:          sum,
		SchemaID:         &schemaID,
	}
	if lineage != nil {
		snap.FirstRowID, snap.AddedRows = &lineage.first, &lineage.added
	}

	return snap, nil
}

// remove deletes every file the producer wrote, and reports those it
// could not remove (left to an orphan cleanup).
func (p *producer) remove() error {
	return removeAll(p.fs, p.written)
}

// removeAll removes paths; a path that does not exist is not an error.
func removeAll(fsys iceio.IO, paths []string) error {
	var left []string
	var errs []error
	for _, path := range paths {
		if err := fsys.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			left = append(left, path)
			errs = append(errs, err)
		}
	}
	if len(left) == 0 {
		return nil
	}

	return fmt.Errorf("could not remove %d metadata files of the failed attempt, left for an orphan cleanup (%s): %w", len(left), strings.Join(left, ", "), errors.Join(errs...))
}
