package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

func backfillCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	dir := fs.String("dir", "", "input folder: one sub-folder per key, DIR/FIELD=VALUE/ (FIELD the partition field, e.g. event_ts_day) or, for a one-field key, DIR/COLUMN=VALUE/ of any one column (DuckDB's PARTITION_BY (event_date) writes DIR/event_date=2026-07-14/)")
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
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
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
	keys, err := e.keyRange(w, *from, *to)
	if err != nil {
		return err
	}
	layout, err := folderLayout(w, *dir)
	if err != nil {
		return err
	}
	if layout.column != "" {
		e.note("backfill: reading %s for the key %s=VALUE", filepath.Join(*dir, layout.column+"=VALUE"), layout.field)
	}
	var readers sync.Map // key text -> the *parquetfile.Reader of its last attempt
	job := func(ctx context.Context, k partition.Key) (array.RecordReader, error) {
		r, err := e.openInput(ctx, w.Table(), &k, []string{layout.dir(k)})
		if err == nil {
			readers.Store(k.String(), r)
		}
		return r, err
	}
	opts = append(opts, backfill.WithClock(time.Now), backfill.WithProgress(backfillProgress(e.progress("backfill"))))
	opts = append(opts, inputIdentity(layout)...)
	before := w.Table().Properties()
	rep, err := backfill.Run(ctx, w, keys, job, opts...)
	after := before
	if tbl, rerr := w.Refresh(context.WithoutCancel(ctx)); rerr == nil {
		after = tbl.Properties()
		if rep.After == (backfill.Stats{}) { // stopped before it measured: measure now
			rep.After, _ = backfill.Measure(context.WithoutCancel(ctx), tbl)
		}
	}
	fmt.Fprintf(e.out, "%d keys: %d written, %d unchanged, %d skipped, %d failed; %d rows, %d commits\nmetadata before: %s\nmetadata after:  %s\n",
		rep.Total, rep.Written, rep.Unchanged, rep.Skipped, len(rep.Failed), rep.Rows, rep.Commits, rep.Before, rep.After)
	reportProperties(e.out, before, after)
	shard.report(e.out, rep)
	// The reader of the key whose rows failed stopped at the failed batch:
	// the key of a one-key group, or the job a group's check names.
	var failed string
	var je *backfill.JobError
	switch {
	case errors.As(err, &je):
		failed = je.Key.String()
	case len(rep.Failed) > 0 && len(rep.Failed[0].Keys) == 1:
		failed = rep.Failed[0].Keys[0].String()
	}
	if r, ok := readers.Load(failed); ok && failed != "" {
		err = inInput(err, r.(*parquetfile.Reader))
	}
	return err
}

// reportProperties prints the table properties a run set or changed: the
// metadata hygiene's, and the name mapping the commits keep up to date
// (long values by their size: a name mapping lists every column).
func reportProperties(out io.Writer, before, after map[string]string) {
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if v := after[k]; before[k] != v {
			if len(v) > 64 {
				v = fmt.Sprintf("(%d bytes)", len(v))
			}
			changed = append(changed, k+"="+v)
		}
	}
	if len(changed) > 0 {
		fmt.Fprintf(out, "table properties set: %s\n", strings.Join(changed, " "))
	}
}

// layout is where a backfill finds each key's input folder.
type layout struct {
	root   string
	field  string // the partition field, when column is set
	column string // the folder column read for field; "" for DIR/KEY/
}

// dir is the input folder of key k.
func (l layout) dir(k partition.Key) string {
	if l.column == "" {
		return filepath.Join(l.root, filepath.FromSlash(k.String()))
	}
	_, value, _ := strings.Cut(k.String(), "=")
	return filepath.Join(l.root, l.column+"="+value)
}

// folderLayout finds how dir names the keys of w's table: DIR/KEY/ when
// a sub-folder is named for the partition field (or dir has no col=value
// sub-folder), else, for a one-field key, DIR/COLUMN=VALUE/ when every
// col=value sub-folder names the same column.
func folderLayout(w *table.Writer, dir string) (layout, error) {
	l := layout{root: dir}
	fields := specFields(w)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return l, fmt.Errorf("backfill: -dir: %w", err)
	}
	cols := map[string]bool{}
	for _, d := range entries {
		if name, _, ok := strings.Cut(d.Name(), "="); ok && d.IsDir() {
			cols[name] = true
		}
	}
	if len(fields) != 1 || len(cols) == 0 || cols[fields[0].Name] {
		return l, nil
	}
	if len(cols) > 1 {
		return l, fmt.Errorf("%w: backfill: %s has folders of columns %s and none of the partition field %s: give a -dir whose sub-folders name one column", os.ErrNotExist, dir, strings.Join(slices.Sorted(maps.Keys(cols)), ", "), fields[0].Name)
	}
	for c := range cols {
		l.field, l.column = fields[0].Name, c
	}
	return l, nil
}

func (e *env) keyRange(w *table.Writer, from, to string) ([]partition.Key, error) {
	a, err := e.key(w, from)
	if err != nil {
		return nil, err
	}
	b, err := e.key(w, to)
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
