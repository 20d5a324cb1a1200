package main

import (
	"context"
	"fmt"
	"time"

	"github.com/icerun/icerun/cleanup"
)

// cleanupCmd lists the orphan files of a table (files under its location
// that no snapshot or metadata references, older than -min-age) and, with
// -delete, removes them. Dry run by default.
func cleanupCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	minAge := fs.Duration("min-age", cleanup.DefaultMinAge, "consider only files older than this (must be > 0; see -any-age)")
	anyAge := fs.Bool("any-age", false, "consider files of any age: only when no writer of the table can be running")
	del := fs.Bool("delete", false, "remove the orphans (default: dry run, list only)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	opts := []cleanup.Option{cleanup.MinAge(*minAge)}
	if *anyAge {
		opts = []cleanup.Option{cleanup.AnyAge()}
	} else if *minAge <= 0 {
		return fmt.Errorf("%w: -min-age must be positive (use -any-age for zero)", errUsage)
	}
	if *del {
		opts = append(opts, cleanup.Execute())
	}
	ctx, _, tbl, err := e.loadTable(ctx)
	if err != nil {
		return err
	}
	p := e.progress("cleanup")
	p.update(0, 1, "listing the files under "+tbl.Location()+" and the files the snapshots reference")
	rep, err := cleanup.Orphans(ctx, tbl, opts...)
	if err != nil {
		return err
	}
	p.update(1, 1, fmt.Sprintf("%d orphan files", len(rep.Orphans)))
	var size int64
	for _, f := range rep.Orphans {
		size += f.Size
		fmt.Fprintf(e.out, "%s\t%d\n", f.Path, f.Size)
	}
	verb := "would remove"
	if !rep.DryRun {
		verb = fmt.Sprintf("removed %d of", len(rep.Removed))
	}
	fmt.Fprintf(e.out, "%s %d orphan files (%d bytes) modified before %s\n", verb, len(rep.Orphans), size, rep.Cutoff.UTC().Format(time.RFC3339))
	return nil
}
