package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/icerun/icerun/commit"
)

// describeCmd prints a table's schema, spec, properties, snapshots and
// sizes.
func describeCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	last := fs.Int("snapshots", 20, "show the last N snapshots (0: all)")
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	ctx, _, tbl, err := e.loadTable(ctx)
	if err != nil {
		return err
	}
	md := tbl.Metadata()
	fmt.Fprintf(e.out, "table:          %s\nlocation:       %s\nformat version: %d\n", e.tableName, tbl.Location(), md.Version())
	fmt.Fprintf(e.out, "schema (id %d, field ids first):\n%s\n", tbl.Schema().ID, indent(tbl.Schema().String()))
	fmt.Fprintf(e.out, "partition spec (id %d): %s\n", tbl.Metadata().DefaultPartitionSpec(), tbl.Spec())
	fmt.Fprintln(e.out, "properties:")
	props := tbl.Properties()
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(e.out, "  %s=%s\n", k, props[k])
	}
	snaps := md.Snapshots()
	fmt.Fprintf(e.out, "snapshots: %d\n", len(snaps))
	from := 0
	if *last > 0 && len(snaps) > *last {
		from = len(snaps) - *last
		fmt.Fprintf(e.out, "  (the last %d)\n", *last)
	}
	if len(snaps) > 0 {
		fmt.Fprintf(e.out, "  %-20s %-20s %-19s %-10s %-9s %-9s %s\n", "snapshot", "parent", "committed (UTC)", "operation", "+rows", "-rows", "partitions")
	}
	for _, s := range snaps[from:] {
		parent, op, p := "-", "", map[string]string{}
		if s.ParentSnapshotID != nil {
			parent = fmt.Sprint(*s.ParentSnapshotID)
		}
		if s.Summary != nil {
			op, p = string(s.Summary.Operation), s.Summary.Properties
		}
		fmt.Fprintf(e.out, "  %-20d %-20s %-19s %-10s %-9s %-9s %s\n", s.SnapshotID, parent, time.UnixMilli(s.TimestampMs).UTC().Format(time.DateTime),
			op, orDash(p["added-records"]), orDash(p["deleted-records"]), orDash(p[commit.SummaryPartitions]))
	}
	if cur := tbl.CurrentSnapshot(); cur != nil && cur.Summary != nil {
		p := cur.Summary.Properties
		fmt.Fprintf(e.out, "current snapshot %d: %s data files, %s records, %s bytes\n", cur.SnapshotID,
			orDash(p["total-data-files"]), orDash(p["total-records"]), orDash(p["total-files-size"]))
	} else {
		fmt.Fprintln(e.out, "current snapshot: none (empty table)")
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
