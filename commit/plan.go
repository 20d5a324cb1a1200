package commit

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

// OldSpecFunc decides the fate of one older-spec data file. The table
// package implements it by reading the file and matching its rows.
type OldSpecFunc func(ctx context.Context, tbl *icetable.Table, f iceberg.DataFile) (Decision, error)

// plan is what the replaced partitions hold in one table state.
type plan struct {
	current map[partition.Key][]iceberg.DataFile // current-spec files, by key
	old     []iceberg.DataFile                   // older-spec files that may hold rows of the keys
}

// planFiles finds the live data files of the keys in tbl's current
// snapshot, and only those: current-spec files are matched exactly by
// partition tuple. Manifests already in cache (nil: none) are not read
// again.
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
	for _, mf := range manifests {
		if mf.ManifestContent() != iceberg.ManifestContentData || mf.PartitionSpecID() != int32(spec.ID()) {
			return planScan(ctx, tbl, spec, keys) // row-level deletes or older specs
		}
	}
	list := slices.Collect(maps.Keys(keys))
	for _, mf := range manifests {
		if !mf.HasAddedFiles() && !mf.HasExistingFiles() || !mayList(spec, mf, list) {
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
				return p, fmt.Errorf("plan: data file %s: %w", f.FilePath(), err)
			}
			if keys[k] {
				p.current[k] = append(p.current[k], f)
			}
		}
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

// planScan plans with iceberg-go's scan, which projects the keys' filter
// onto older specs and associates row-level delete files. Manifests and
// files are pruned with the keys' source filters; current-spec files are
// then matched exactly by partition tuple.
func planScan(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys map[partition.Key]bool) (plan, error) {
	p := plan{current: make(map[partition.Key][]iceberg.DataFile)}
	var filter iceberg.BooleanExpression = iceberg.AlwaysFalse{}
	for k := range keys {
		filter = iceberg.NewOr(filter, spec.Filter(k))
	}
	tasks, err := tbl.Scan(icetable.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	for _, t := range tasks {
		f := t.File
		if f.SpecID() != int32(spec.ID()) {
			p.old = append(p.old, f)
			if hasDeletes(t) {
				return p, fmt.Errorf("%w: data file %s has row-level delete files", ErrUnsupported, f.FilePath())
			}
			continue
		}
		k, err := spec.KeyFromValues(f.Partition())
		if err != nil {
			return p, fmt.Errorf("plan: data file %s: %w", f.FilePath(), err)
		}
		if !keys[k] {
			continue
		}
		if hasDeletes(t) {
			return p, fmt.Errorf("%w: partition %s has row-level delete files (merge-on-read); compact them first", ErrUnsupported, k)
		}
		p.current[k] = append(p.current[k], f)
	}
	return p, nil
}

func hasDeletes(t icetable.FileScanTask) bool {
	return len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0
}

// Precheck plans the keys on tbl without committing anything, so that a
// replacement that cannot be done (row-level deletes in the partition)
// fails before any data file is written.
func Precheck(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, keys []partition.Key) error {
	if s := tbl.CurrentSnapshot(); s == nil || (s.Summary != nil && s.Summary.Properties["total-delete-files"] == "0") {
		return nil // no row-level delete file anywhere: nothing to refuse
	}
	set := make(map[partition.Key]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	_, err := planFiles(ctx, tbl, spec, set, nil)
	return err
}
