package snapshotcommit

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

// Decision says what to do with a data file written under an older
// partition spec that may hold rows of the replaced partitions.
type Decision struct {
	Delete      bool               // remove the file from the table
	Replacement []iceberg.DataFile // files that hold the file's other rows (only with Delete)
}

// OldSpecFunc decides the fate of one older-spec data file, task.File,
// whose rows are those task's delete files leave. The table package
// implements it by reading the file (deletes applied) and matching its
// rows.
type OldSpecFunc func(ctx context.Context, tbl *icetable.Table, task icetable.FileScanTask) (Decision, error)

// plan is what the replaced partitions hold in one table state.
type plan struct {
	// current are the current-spec files of each key: its data files and
	// the delete files of its partition (position deletes, deletion
	// vectors, equality deletes), which can only apply to its data files.
	current map[partition.Key][]iceberg.DataFile
	old     []icetable.FileScanTask // older-spec data files that may hold rows of the keys, with their deletes
	// global says that delete files of another, unpartitioned spec may
	// apply to the keys' data files (global equality deletes): the keys'
	// files alone do not tell what rows they hold.
	global bool
}

// planFiles finds the live files of the keys in tbl's current snapshot,
// and only those: current-spec files are matched exactly by partition
// tuple. Manifests already in cache (nil: none) are not read again.
func planFiles(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys map[partition.Key]bool, cache *manifestCache) (plan, error) {
	p := plan{current: make(map[partition.Key][]iceberg.DataFile)}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return p, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return p, err
	}
	manifests, err := cache.manifests(fsys, snap)
	if err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	list := slices.Collect(maps.Keys(keys))
	scan := false
	for _, mf := range manifests {
		if mf.ManifestContent() == iceberg.ManifestContentData && mf.PartitionSpecID() != int32(spec.ID()) {
			scan = true // older specs: iceberg-go's scan projects the keys onto them
		}
	}
	for _, mf := range manifests {
		data := mf.ManifestContent() == iceberg.ManifestContentData
		if !mf.HasAddedFiles() && !mf.HasExistingFiles() || data && scan {
			continue
		}
		if mf.PartitionSpecID() != int32(spec.ID()) {
			if ps := tbl.Metadata().PartitionSpecByID(int(mf.PartitionSpecID())); ps == nil || ps.IsUnpartitioned() {
				p.global = true
			}
			continue
		}
		if !mayList(spec, mf, list) {
			continue
		}
		entries, err := cache.live(fsys, mf)
		if err != nil {
			return p, fmt.Errorf("plan: %w", err)
		}
		for _, e := range entries {
			f := e.DataFile()
			k, err := spec.KeyFromValues(f.Partition())
			if err != nil {
				return p, fmt.Errorf("plan: file %s: %w", f.FilePath(), err)
			}
			if keys[k] {
				p.current[k] = append(p.current[k], f)
			}
		}
	}
	if scan {
		return p, planScan(ctx, tbl, spec, keys, &p)
	}

	return p, nil
}

// mayList reports whether mf, a manifest of spec, may list a file of one
// of keys by its partition summaries. A nil spec (one that cannot be
// compiled) or an invalid key never prunes.
func mayList(spec *partition.Spec, mf iceberg.ManifestFile, keys []partition.Key) bool {
	for _, k := range keys {
		if spec == nil || !k.IsValid() || spec.MayHold(k, mf.Partitions()) {
			return true
		}
	}

	return false
}

// planScan plans the data files with iceberg-go's scan, which projects
// the keys' filter onto older specs and associates row-level delete files.
// Manifests and files are pruned with the keys' source filters;
// current-spec files are then matched exactly by partition tuple.
func planScan(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys map[partition.Key]bool, p *plan) error {
	var filter iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	for k := range keys {
		filter = iceberg.NewOr(filter, spec.Filter(k))
	}
	tasks, err := tbl.Scan(icetable.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	for _, t := range tasks {
		f := t.File
		if f.SpecID() != int32(spec.ID()) {
			p.old = append(p.old, t)
			continue
		}
		k, err := spec.KeyFromValues(f.Partition())
		if err != nil {
			return fmt.Errorf("plan: data file %s: %w", f.FilePath(), err)
		}
		if keys[k] {
			p.current[k] = append(p.current[k], f)
		}
	}
	return nil
}

// Files returns the live current-spec files of each of keys in tbl's
// current snapshot: its data files and the delete files of its partition,
// as a replacement of the keys would remove them. A copy-on-write caller
// records them when it reads a partition and compares them in its
// [Request].Verify.
func Files(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys []partition.Key) (map[partition.Key][]iceberg.DataFile, error) {
	set := make(map[partition.Key]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	p, err := planFiles(ctx, tbl, spec, set, nil)
	return p.current, err
}
