package main

import (
	"context"
	"fmt"

	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// windowCmd replaces a lookback window: the last N partitions up to -end
// hold exactly the input's rows, in one snapshot (table.Writer.ReplaceWindow).
func windowCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	last := fs.Int("last", 0, "the window's size: the N partitions ending at -end (every one is replaced; one without input rows is emptied)")
	end := fs.String("end", "", "the window's last key, e.g. event_date=2026-07-14")
	late := fs.String("late", "reject", "rows outside the window: reject (commit nothing), drop, or route (to the side table TABLE_late)")
	var paths stringList
	fileFlag(fs, &paths, "Parquet file or folder with the window's rows")
	commitLockFlag(e, fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if *last < 1 || *end == "" || len(paths) == 0 {
		return fmt.Errorf("%w: -last N (N >= 1), -end KEY and the input (-file PATH or files after the table) are required", errUsage)
	}
	policy, ok := map[string]table.LatePolicy{"reject": table.RejectLate, "drop": table.DropLate, "route": table.RouteLate}[*late]
	if !ok {
		return fmt.Errorf("%w: -late %q: want reject, drop or route", errUsage, *late)
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	endKey, err := e.key(w, *end)
	if err != nil {
		return err
	}
	spec, err := partition.NewSpec(w.Table().Spec(), w.Table().Schema())
	if err != nil {
		return err
	}
	window, err := spec.Last(endKey, *last)
	if err != nil {
		return err
	}
	rows, err := e.openInput(ctx, w.Table(), nil, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	res, err := w.ReplaceWindow(ctx, window, policy, rows)
	if err != nil {
		return err
	}
	e.printPartitions(w, res)
	return nil
}
