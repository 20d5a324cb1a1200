package main

import (
	"context"
	"fmt"
	"time"

	"github.com/icerun/icerun/backfill"
)

// expireCmd expires old snapshots, keeping icerun's lineage.
func expireCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	olderThan := fs.Duration("older-than", 120*time.Hour, "expire only snapshots older than this (Iceberg's default max snapshot age: 5 days)")
	retain := fs.Int("retain-last", 1, "always keep the last N snapshots of main (at least 1)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if *retain < 1 || *olderThan < 0 {
		return fmt.Errorf("%w: -retain-last must be at least 1 and -older-than not negative", errUsage)
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	p := e.progress("expire")
	before := len(w.Table().Metadata().Snapshots())
	p.update(0, 1, fmt.Sprintf("%d snapshots; expiring those older than %s beyond the last %d", before, *olderThan, *retain))
	if err := backfill.Expire(ctx, w, *retain, *olderThan); err != nil {
		return err
	}
	tbl, err := w.Refresh(ctx)
	if err != nil {
		return err
	}
	after := len(tbl.Metadata().Snapshots())
	p.update(1, 1, "done")
	fmt.Fprintf(e.out, "expired %d of %d snapshots; %d remain (lineage kept)\n", before-after, before, after)
	return nil
}
