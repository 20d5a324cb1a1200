package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/table"
)

// publishCmd publishes a write-audit-publish branch onto main:
//
//	icerun publish db.t -branch audit [-force]
//
// It prints what main now holds of the branch's partitions; a conflict
// with main names -force.
func publishCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	branch := fs.String("branch", "", "the branch to publish (written with icerun replace -branch)")
	force := fs.Bool("force", false, "the branch wins where main replaced its partitions since the branch's base")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if *branch == "" {
		return fmt.Errorf("%w: -branch is required", errUsage)
	}
	var opts []table.Option
	if *force {
		opts = append(opts, table.WithForce())
	}
	ctx, w, err := e.writer(ctx, opts...)
	if err != nil {
		return err
	}
	res, err := w.Publish(ctx, *branch)
	if errors.Is(err, commit.ErrPublishConflict) {
		return fmt.Errorf("%w (to let the branch win: icerun publish %s -branch %s -force)", err, e.tableName, *branch)
	}
	if err != nil {
		return err
	}
	how := "re-planned on main"
	switch {
	case res.Unchanged:
		how = "already published"
	case res.AddedFiles == 0 && res.DeletedFiles == 0:
		how = "fast-forward"
	}
	fmt.Fprintf(e.out, "branch %s: main at snapshot %d (%s), partitions %s, +%d rows (%d files), -%d rows (%d files)\n",
		*branch, res.SnapshotID, how, partitionNames(res.Partitions), res.AddedRows, res.AddedFiles, res.DeletedRows, res.DeletedFiles)
	return nil
}

// dropBranchCmd removes a branch's ref.
func dropBranchCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	branch := fs.String("branch", "", "the branch to remove")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if *branch == "" {
		return fmt.Errorf("%w: -branch is required", errUsage)
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	if err := w.DropBranch(ctx, *branch); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "dropped branch %s of %s; its snapshots stay until expired\n", *branch, e.tableName)
	return nil
}

// branchesCmd lists a table's refs: branches and tags.
func branchesCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	_, _, tbl, err := e.loadTable(ctx)
	if err != nil {
		return err
	}
	refs := maps.Collect(tbl.Metadata().Refs())
	if len(refs) == 0 {
		fmt.Fprintf(e.out, "%s has no branch yet (no snapshot)\n", e.tableName)
		return nil
	}
	fmt.Fprintf(e.out, "%-20s %-7s %-20s %s\n", "name", "type", "snapshot", "committed (UTC)")
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		r := refs[name]
		when := "-"
		if s := tbl.Metadata().SnapshotByID(r.SnapshotID); s != nil {
			when = timeText(s.TimestampMs)
		}
		fmt.Fprintf(e.out, "%-20s %-7s %-20d %s\n", name, r.SnapshotRefType, r.SnapshotID, when)
	}
	return nil
}

// branchFlag adds -branch to a writing command: its writes go to that
// branch (table.WithBranch) instead of main.
func branchFlag(e *env, fs *flag.FlagSet) {
	fs.StringVar(&e.branch, "branch", "", "write to this branch instead of main (publish it with icerun publish)")
}
