package main

import (
	"context"
	"fmt"
	"time"

	"github.com/icerun/icerun/table"
)

func historyCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return fmt.Errorf("%w: history takes one KEY after the table", errUsage)
	}
	if err := noArgs(rest[1:]); err != nil {
		return err
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := e.key(w, rest[0])
	if err != nil {
		return err
	}
	hist := table.History(w.Table(), key.String())
	if len(hist) == 0 {
		fmt.Fprintf(e.out, "%s: no icerun write in the retained snapshots\n", partitionName(key.String()))
		return nil
	}
	fmt.Fprintf(e.out, "%-20s %-24s %-20s %-38s %s\n", "snapshot", "committed (UTC)", "code version", "run id", "snapshot rows")
	for _, h := range hist {
		fmt.Fprintf(e.out, "%-20d %-24s %-20s %-38s %d\n", h.SnapshotID, time.UnixMilli(h.TimestampMs).UTC().Format(time.DateTime), h.CodeVersion, h.RunID, h.Rows)
	}
	return nil
}
