package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

func replaceCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("replace")
	keyText := fs.String("key", "", "partition key, e.g. event_date=2026-07-14")
	path := fs.String("file", "", "Parquet file with the partition's rows")
	branchFlag(e, fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *keyText == "" || *path == "" {
		return fmt.Errorf("%w: -key and -file are required", errUsage)
	}
	w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := w.Key(*keyText)
	if err != nil {
		return err
	}
	rows, err := readFiles(ctx, []string{*path})
	if err != nil {
		return err
	}
	defer rows.Release()
	res, err := w.ReplacePartition(ctx, key, rows)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "%s: snapshot %d, +%d rows (%d files), -%d rows (%d files), unchanged=%t\n",
		key, res.SnapshotID, res.AddedRows, res.AddedFiles, res.DeletedRows, res.DeletedFiles, res.Unchanged)
	return nil
}

func backfillCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("backfill")
	dir := fs.String("dir", "", "input folder: one sub-folder per key (DIR/event_date=2026-07-14/*.parquet)")
	from := fs.String("from", "", "first key")
	to := fs.String("to", "", "last key")
	workers := fs.Int("workers", 1, "keys run at once")
	perSnap := fs.Int("keys-per-snapshot", 1, "keys committed per snapshot")
	retries := fs.Int("retries", backfill.DefaultRetries, "retries of a failed key")
	order := fs.String("order", "forward", "forward, reverse or shuffled")
	keepGoing := fs.Bool("continue", false, "continue after a key failed every attempt")
	redo := fs.Bool("redo", false, "run keys already done by this code version too")
	keep := fs.Int("keep-snapshots", 0, "expire all but the last N snapshots during the run (0: never); lineage is kept")
	shard := newShardFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	sharded, err := shard.options(os.Getenv)
	if err != nil {
		return err
	}
	if *dir == "" || *from == "" || *to == "" {
		return fmt.Errorf("%w: -dir, -from and -to are required", errUsage)
	}
	h := backfill.DefaultHygiene
	h.KeepSnapshots = *keep
	opts := append(sharded, backfill.WithWorkers(*workers), backfill.WithKeysPerSnapshot(*perSnap), backfill.WithRetries(*retries), backfill.WithHygiene(h))
	switch *order {
	case "forward":
	case "reverse":
		opts = append(opts, backfill.WithOrder(backfill.Reverse))
	case "shuffled":
		opts = append(opts, backfill.WithOrder(backfill.Shuffled(1)))
	default:
		return fmt.Errorf("%w: -order %q: want forward, reverse or shuffled", errUsage, *order)
	}
	if *keepGoing {
		opts = append(opts, backfill.WithOnFailure(backfill.Continue))
	}
	if *redo {
		opts = append(opts, backfill.WithResume(backfill.RedoAll))
	}
	w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	keys, err := keyRange(w, *from, *to)
	if err != nil {
		return err
	}
	job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		return readDir(ctx, filepath.Join(*dir, filepath.FromSlash(k.String())))
	}
	opts = append(opts, backfill.WithClock(time.Now), backfill.WithProgress(progressPrinter(e.err)))
	rep, err := backfill.Run(ctx, w, keys, job, opts...)
	fmt.Fprintf(e.out, "%d keys: %d written, %d unchanged, %d skipped, %d failed; %d rows, %d commits\nmetadata before: %s\nmetadata after:  %s\n",
		rep.Total, rep.Written, rep.Unchanged, rep.Skipped, len(rep.Failed), rep.Rows, rep.Commits, rep.Before, rep.After)
	shard.report(e.out, rep)
	return err
}

func keyRange(w *table.Writer, from, to string) ([]partition.Key, error) {
	a, err := w.Key(from)
	if err != nil {
		return nil, err
	}
	b, err := w.Key(to)
	if err != nil {
		return nil, err
	}
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return nil, err
	}
	return spec.Range(a, b)
}

// progressPrinter draws a bar on a terminal and prints log lines otherwise.
func progressPrinter(out interface{ Write([]byte) (int, error) }) func(backfill.Progress) {
	tty := false
	if f, ok := out.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return func(p backfill.Progress) {
		line := fmt.Sprintf("%d/%d keys, %d rows, %.0f rows/s, ETA %s", p.Done, p.Total, p.Rows, p.RowsPerSec, p.ETA.Round(time.Second))
		if p.Failed > 0 {
			line += fmt.Sprintf(", %d failed", p.Failed)
		}
		if !tty {
			fmt.Fprintln(out, "backfill:", line)
			return
		}
		const width = 30
		n := width * p.Done / max(p.Total, 1)
		fmt.Fprintf(out, "\r[%s%s] %s ", strings.Repeat("#", n), strings.Repeat(".", width-n), line)
		if p.Done == p.Total {
			fmt.Fprintln(out)
		}
	}
}

func historyCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("history")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: history takes one KEY", errUsage)
	}
	w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := w.Key(fs.Arg(0))
	if err != nil {
		return err
	}
	hist := table.History(w.Table(), key.String())
	if len(hist) == 0 {
		fmt.Fprintf(e.out, "%s: no icerun write in the retained snapshots\n", key)
		return nil
	}
	fmt.Fprintf(e.out, "%-20s %-24s %-20s %-38s %s\n", "snapshot", "committed (UTC)", "code version", "run id", "snapshot rows")
	for _, h := range hist {
		fmt.Fprintf(e.out, "%-20d %-24s %-20s %-38s %d\n", h.SnapshotID, time.UnixMilli(h.TimestampMs).UTC().Format(time.DateTime), h.CodeVersion, h.RunID, h.Rows)
	}
	return nil
}

func planCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags("plan")
	keyText := fs.String("key", "", "partition key")
	path := fs.String("file", "", "Parquet file that would replace it (optional)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *keyText == "" {
		return fmt.Errorf("%w: -key is required", errUsage)
	}
	w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := w.Key(*keyText)
	if err != nil {
		return err
	}
	tbl := w.Table()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "replace %s of %s (dry run, nothing written)\n", key, e.tableName)
	if tbl.CurrentSnapshot() != nil {
		tasks, err := tbl.Scan(icetable.WithRowFilter(spec.Filter(key))).PlanFiles(ctx)
		if err != nil {
			return err
		}
		for _, t := range tasks {
			f := t.File
			what := "delete"
			if int(f.SpecID()) != spec.ID() {
				what = "read (older spec: deleted, or rewritten without the key's rows)"
			} else if k, err := spec.KeyFromValues(f.Partition()); err != nil || k != key {
				continue
			}
			fmt.Fprintf(e.out, "  spec %d  %s  %s  (%d rows)\n", f.SpecID(), what, f.FilePath(), f.Count())
		}
	}
	if *path != "" {
		rows, err := readFiles(ctx, []string{*path})
		if err != nil {
			return err
		}
		defer rows.Release()
		var n int64
		for rows.Next() {
			n += rows.RecordBatch().NumRows()
		}
		if err := rows.Err(); err != nil {
			return err
		}
		fmt.Fprintf(e.out, "  spec %d  add     new data files from %s  (%d rows)\n", spec.ID(), *path, n)
	} else {
		fmt.Fprintf(e.out, "  spec %d  add     the input's rows as new data files\n", spec.ID())
	}
	return nil
}
