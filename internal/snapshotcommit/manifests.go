package snapshotcommit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// ManifestsRequest rewrites the manifests of main's current snapshot,
// like Java's RewriteManifests (Spark's rewrite_manifests): the same data
// and delete files, in manifests clustered by partition of at most
// ManifestEntries live entries each.
type ManifestsRequest struct {
	Target
}

// RewriteManifests commits mr as one snapshot of operation "replace"
// whose rows are the parent's. Manifests that are already as few as their
// live entries need (per content and spec) are left as they are, and the
// result is Unchanged: no snapshot. Conflicts are re-planned on the new
// table state and retried as every commit's.
func RewriteManifests(ctx context.Context, cat catalog.Catalog, mr ManifestsRequest) (commit.Result, error) {
	l := &loop{cat: cat, t: &mr.Target, op: &manifestsOp{token: mr.Token, cache: newManifestCache()}}
	return l.run(ctx, commit.Result{})
}

// manifestsOp is the [operation] of a [ManifestsRequest].
type manifestsOp struct {
	token string
	cache *manifestCache // manifests read, kept across attempts
}

// validate accepts every state: the rewrite reads the manifests of the
// state it commits on, and the commit requires main to be there.
func (o *manifestsOp) validate(context.Context, *icetable.Table) error { return nil }

// apply stages the rewritten manifests of tbl's current snapshot: nil
// when they are as few as their live entries need.
func (o *manifestsOp) apply(ctx context.Context, tbl *icetable.Table, _ *commit.Result) (*change, error) {
	st, err := stageManifestRewrite(ctx, tbl, iceberg.Properties{commit.SummaryCommitToken: o.token}, o.cache)
	if err != nil {
		return nil, fmt.Errorf("rewrite manifests: %w", err)
	}
	if st == nil {
		return nil, nil
	}
	return st.change(nil), nil
}

// manifestGroup is the live entries of one content (data or deletes) and
// one partition spec, and the manifests that hold them.
type manifestGroup struct {
	content   iceberg.ManifestContent
	spec      int32
	entries   []iceberg.ManifestEntry
	manifests int
}

// stageManifestRewrite writes the rewritten manifests of tbl's current
// snapshot and its manifest list, or returns nil when no group of
// manifests has grown apart (more manifests than its live entries need).
func stageManifestRewrite(ctx context.Context, tbl *icetable.Table, props iceberg.Properties, cache *manifestCache) (_ *staged, err error) {
	cur := tbl.Metadata().CurrentSnapshot()
	if cur == nil {
		return nil, nil
	}
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
	mfs, err := cache.manifests(p.fs, cur)
	if err != nil {
		return nil, err
	}
	groups := map[[2]int32]*manifestGroup{}
	for _, mf := range mfs {
		id := [2]int32{int32(mf.ManifestContent()), mf.PartitionSpecID()}
		g := groups[id]
		if g == nil {
			g = &manifestGroup{content: mf.ManifestContent(), spec: mf.PartitionSpecID()}
			groups[id] = g
		}
		g.manifests++
		entries, err := p.entries(mf)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			g.entries = append(g.entries, existing(e))
		}
	}
	grownApart := false
	for _, g := range groups {
		need := (len(g.entries) + ManifestEntries - 1) / ManifestEntries
		grownApart = grownApart || g.manifests > need
	}
	if !grownApart {
		return nil, nil
	}
	var manifests []iceberg.ManifestFile
	for _, id := range slices.SortedFunc(maps.Keys(groups), func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	}) {
		g := groups[id]
		written, err := p.writeChunks(g.spec, g.entries, g.content)
		if err != nil {
			return nil, err
		}
		manifests = append(manifests, written...)
	}
	sum := p.summary(KindOverwrite, props, nil, nil, manifestCounts{created: len(manifests), replaced: len(mfs)})
	sum.Operation = icetable.OpReplace // the same files in other manifests
	snap, err := p.writeList(manifests, sum)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.staged(snap, icetable.MainBranch, nil), nil
}
