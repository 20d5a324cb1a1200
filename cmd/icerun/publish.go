package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/icerun/icerun/table"
)

// publishCmd publishes a write-audit-publish branch onto main:
//
//	icerun publish db.t -branch audit [-force]
//
// (or -table db.t). It prints what main now holds of the branch's
// partitions; a conflict with main exits 1 and names the partitions.
func publishCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	e.writeFlags(fs)
	branch := fs.String("branch", "", "the branch to publish (written with icerun replace -branch)")
	force := fs.Bool("force", false, "the branch wins where main replaced its partitions since the branch's base")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
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
		*branch, res.SnapshotID, how, strings.Join(res.Partitions, " "), res.AddedRows, res.AddedFiles, res.DeletedRows, res.DeletedFiles)
	return nil
}

// branchFlag adds -branch to a writing command: its writes go to that
// branch (table.WithBranch) instead of main.
func branchFlag(e *env, fs *flag.FlagSet) {
	fs.StringVar(&e.branch, "branch", "", "write to this branch instead of main (publish it with icerun publish)")
}
