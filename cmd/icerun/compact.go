package main

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/table"
)

// compactCmd folds a partition's delete files (and small files) back
// into target-size data files: one partition with -key, every partition
// the policy selects with -all. -manifests rewrites the table's manifests
// (after the partitions, with -key or -all; alone, only them).
func compactCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	keyText := fs.String("key", "", "partition key to compact, e.g. event_date=2026-07-14")
	all := fs.Bool("all", false, "compact every partition the policy selects")
	ratio := fs.Float64("min-delete-ratio", table.DefaultCompactPolicy.MinDeleteRatio, "compact a partition whose delete files delete at least this share of its rows (0: any delete file)")
	manifests := fs.Bool("manifests", false, "rewrite the table's manifests into few, clustered by partition, when they have grown apart (Spark's rewrite_manifests)")
	small := fs.Int("min-small-files", table.DefaultCompactPolicy.MinSmallFiles, "compact a partition with at least this many small data files (under 3/4 of write.target-file-size-bytes)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if *keyText != "" && *all || *keyText == "" && !*all && !*manifests {
		return fmt.Errorf("%w: give -key, -all or -manifests", errUsage)
	}
	ctx, w, err := e.writer(ctx, table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: *ratio, MinSmallFiles: *small}))
	if err != nil {
		return err
	}
	switch {
	case *all:
		done, err := w.CompactAll(ctx)
		for k, res := range done {
			e.printResult(k, w, res)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.out, "compacted %d %s\n", len(done), plural(len(done), "partition", "partitions"))
	case *keyText != "":
		key, err := w.Key(*keyText)
		if err != nil {
			return err
		}
		res, err := w.Compact(ctx, key)
		if err != nil {
			return err
		}
		if res.Unchanged {
			fmt.Fprintf(e.out, "%s: nothing to compact (snapshot %d)\n", key, res.SnapshotID)
		} else {
			e.printResult(key.String(), w, res)
		}
	}
	if !*manifests {
		return nil
	}
	res, err := w.RewriteManifests(ctx)
	if err != nil {
		return err
	}
	if res.Unchanged {
		fmt.Fprintf(e.out, "manifests: nothing to rewrite (snapshot %d)\n", res.SnapshotID)
		return nil
	}
	var sum map[string]string
	if snap := w.Table().CurrentSnapshot(); snap != nil && snap.Summary != nil {
		sum = snap.Summary.Properties
	}
	fmt.Fprintf(e.out, "manifests: %s rewritten into %s (snapshot %d)\n", sum["manifests-replaced"], sum["manifests-created"], res.SnapshotID)
	return nil
}
