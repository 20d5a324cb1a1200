package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func replaceCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	e.writeFlags(fs)
	keyText := fs.String("key", "", "partition key, e.g. event_date=2026-07-14 (several fields joined by /)")
	var paths stringList
	fs.Var(&paths, "file", "Parquet file or folder with the partition's rows (repeatable; folders are read recursively, Hive col=value folders included)")
	branchFlag(e, fs)
	commitLockFlag(e, fs)
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *keyText == "" || len(paths) == 0 {
		return fmt.Errorf("%w: -key and -file are required", errUsage)
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	key, err := w.Key(*keyText)
	if err != nil {
		return err
	}
	rows, err := e.openInput(ctx, w.Table(), key, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	res, err := w.ReplacePartition(ctx, key, rows)
	if err != nil {
		return err
	}
	e.printResult(key.String(), w, res)
	return nil
}

// printResult prints what a replacement did, in words.
func (e *env) printResult(key string, w *table.Writer, res commit.Result) {
	if res.Unchanged {
		fmt.Fprintf(e.out, "%s: unchanged: the partition already holds exactly this input from code version %s (snapshot %d); nothing written\n", key, w.CodeVersion(), res.SnapshotID)
	} else {
		fmt.Fprintf(e.out, "%s: snapshot %d: +%d rows in %d %s, -%d rows in %d %s, %d commit %s\n",
			key, res.SnapshotID, res.AddedRows, res.AddedFiles, plural(res.AddedFiles, "file", "files"),
			res.DeletedRows, res.DeletedFiles, plural(res.DeletedFiles, "file", "files"), res.Attempts, plural(res.Attempts, "attempt", "attempts"))
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(e.out, "ignored input columns (no table column): %s\n", strings.Join(res.Ignored, ", "))
	}
}

func backfillCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	e.writeFlags(fs)
	dir := fs.String("dir", "", "input folder: one sub-folder per key (DIR/event_date=2026-07-14/*.parquet, as DuckDB's PARTITION_BY writes)")
	from := fs.String("from", "", "first key")
	to := fs.String("to", "", "last key")
	workers := fs.Int("workers", 1, "keys run at once")
	perSnap := fs.Int("keys-per-snapshot", 1, "keys committed per snapshot")
	retries := fs.Int("retries", backfill.DefaultRetries, "retries of a key that failed with a transient error")
	order := fs.String("order", "forward", "forward, reverse or shuffled")
	keepGoing := fs.Bool("continue", false, "continue after a key failed every attempt")
	redo := fs.Bool("redo", false, "run every key, also those whose code version and input are unchanged")
	keep := fs.Int("keep-snapshots", 0, "expire all but the last N snapshots during and after the run (0: never); lineage is kept")
	shard := newShardFlags(fs)
	commitLockFlag(e, fs)
	if err := e.parse(fs, args); err != nil {
		return err
	}
	sharded, err := shard.options(os.Getenv)
	if err != nil {
		return err
	}
	if *dir == "" || *from == "" || *to == "" {
		return fmt.Errorf("%w: -dir, -from and -to are required", errUsage)
	}
	if *keep < 0 {
		return fmt.Errorf("%w: -keep-snapshots %d: want 0 or more", errUsage, *keep)
	}
	h := backfill.DefaultHygiene
	h.KeepSnapshots = *keep
	h.ExpireRetainLast = *keep
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
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	keys, err := keyRange(w, *from, *to)
	if err != nil {
		return err
	}
	job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		return e.openInput(ctx, w.Table(), k, []string{keyDir(*dir, k)})
	}
	opts = append(opts, backfill.WithClock(time.Now), backfill.WithProgress(backfillProgress(newProgress(e.err, "backfill"))))
	opts = append(opts, inputIdentity(*dir)...)
	rep, err := backfill.Run(ctx, w, keys, job, opts...)
	fmt.Fprintf(e.out, "%d keys: %d written, %d unchanged, %d skipped, %d failed; %d rows, %d commits\nmetadata before: %s\nmetadata after:  %s\n",
		rep.Total, rep.Written, rep.Unchanged, rep.Skipped, len(rep.Failed), rep.Rows, rep.Commits, rep.Before, rep.After)
	shard.report(e.out, rep)
	return err
}

// keyDir is the input folder of key k under dir.
func keyDir(dir string, k partition.Key) string {
	return filepath.Join(dir, filepath.FromSlash(k.String()))
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

func backfillProgress(p *progress) func(backfill.Progress) {
	return func(b backfill.Progress) {
		line := fmt.Sprintf("%d/%d keys, %d rows, %.0f rows/s, ETA %s", b.Done, b.Total, b.Rows, b.RowsPerSec, b.ETA.Round(time.Second))
		if b.Failed > 0 {
			line += fmt.Sprintf(", %d failed", b.Failed)
		}
		p.update(b.Done, b.Total, line)
	}
}

func historyCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	e.writeFlags(fs)
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: history takes one KEY", errUsage)
	}
	ctx, w, err := e.writer(ctx)
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
	fs := e.flags()
	e.writeFlags(fs)
	keyText := fs.String("key", "", "partition key")
	var paths stringList
	fs.Var(&paths, "file", "Parquet file or folder that would replace it (optional, repeatable): its rows are checked against the key")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *keyText == "" {
		return fmt.Errorf("%w: -key is required", errUsage)
	}
	ctx, w, err := e.writer(ctx)
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
	if len(paths) == 0 {
		fmt.Fprintf(e.out, "  spec %d  add     the input's rows as new data files\n", spec.ID())
		return nil
	}
	rows, err := e.openInput(ctx, tbl, key, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	chk, err := checkRows(ctx, tbl, spec, key, rows)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.out, "  spec %d  add     new data files from %s  (%d rows)\n", spec.ID(), strings.Join(paths, ", "), chk.rows)
	if len(chk.ignored) > 0 {
		fmt.Fprintf(e.out, "ignored input columns (no table column): %s\n", strings.Join(chk.ignored, ", "))
	}
	if chk.outside > 0 {
		return fmt.Errorf("%w: %d of %d input rows are outside %s (first at row %d): a replace would reject this input and commit nothing", partition.ErrRowOutside, chk.outside, chk.rows, key, chk.firstOutside)
	}
	fmt.Fprintf(e.out, "every input row belongs to %s\n", key)
	return nil
}

// rowCheck is what plan found in the input.
type rowCheck struct {
	rows, outside, firstOutside int64
	ignored                     []string
}

// checkRows resolves the input to the table schema and checks every row
// against key, as a replace would, without writing.
func checkRows(ctx context.Context, tbl *icetable.Table, spec *partition.Spec, key partition.Key, rows array.RecordReader) (rowCheck, error) {
	var c rowCheck
	nm := tbl.Metadata().NameMapping()
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), nm, schema.IgnoreUnknown)
	if err != nil {
		return c, err
	}
	c.ignored = res.Ignored()
	m, err := spec.Matcher(key, res.Schema())
	if err != nil {
		return c, err
	}
	for rows.Next() {
		rec, err := res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return c, err
		}
		mask, err := m.Mask(rec)
		rec.Release()
		if err != nil {
			return c, err
		}
		for i, ok := range mask {
			if !ok {
				if c.outside == 0 {
					c.firstOutside = c.rows + int64(i) + 1
				}
				c.outside++
			}
		}
		c.rows += int64(len(mask))
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	return c, nil
}

var _ = errors.Is
