package main

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/table"
)

// compactCmd folds a partition's delete files (and small files) back
// into target-size data files: one partition with -key, every partition
// the policy selects with -all.
func compactCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	keyText := fs.String("key", "", "partition key to compact, e.g. event_date=2026-07-14")
	all := fs.Bool("all", false, "compact every partition the policy selects")
	ratio := fs.Float64("min-delete-ratio", table.DefaultCompactPolicy.MinDeleteRatio, "compact a partition whose delete files delete at least this share of its rows (0: any delete file)")
	small := fs.Int("min-small-files", table.DefaultCompactPolicy.MinSmallFiles, "compact a partition with at least this many small data files (under 3/4 of write.target-file-size-bytes)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if (*keyText == "") == !*all {
		return fmt.Errorf("%w: give -key or -all", errUsage)
	}
	ctx, w, err := e.writer(ctx, table.WithCompactPolicy(table.CompactPolicy{MinDeleteRatio: *ratio, MinSmallFiles: *small}))
	if err != nil {
		return err
	}
	if *all {
		done, err := w.CompactAll(ctx)
		for k, res := range done {
			e.printResult(k, w, res)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.out, "compacted %d %s\n", len(done), plural(len(done), "partition", "partitions"))
		return nil
	}
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
		return nil
	}
	e.printResult(key.String(), w, res)
	return nil
}
