package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// replaceCmd makes one partition (-key) hold exactly the input's rows, or,
// without -key, every partition the rows produce (a dynamic replace:
// partitions without input rows are left as they are).
func replaceCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	keyText := fs.String("key", "", "partition key, e.g. event_date=2026-07-14 (several fields joined by /); without it, every partition the rows produce is replaced (the others are left as they are)")
	var paths stringList
	fileFlag(fs, &paths, "Parquet file or folder with the rows")
	branchFlag(e, fs)
	commitLockFlag(e, fs)
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if len(paths) == 0 {
		return fmt.Errorf("%w: no input: give -file PATH or the files after the table", errUsage)
	}
	ctx, w, err := e.writer(ctx)
	if err != nil {
		return err
	}
	if *keyText == "" {
		rows, err := e.openInput(ctx, w.Table(), nil, paths)
		if err != nil {
			return err
		}
		defer rows.Release()
		res, err := w.ReplacePartitions(ctx, rows)
		if err != nil {
			return err
		}
		e.printPartitions(w, res)
		e.noteBranch(w, res)
		return nil
	}
	key, err := e.key(w, *keyText)
	if err != nil {
		return err
	}
	rows, err := e.openInput(ctx, w.Table(), &key, paths)
	if err != nil {
		return err
	}
	defer rows.Release()
	res, err := w.ReplacePartition(ctx, key, rows)
	if err != nil {
		return inInput(err, rows)
	}
	e.printResult(key.String(), w, res)
	e.noteBranch(w, res)
	return nil
}

// noteBranch says when an unchanged write to a branch left no branch:
// main already holds the input, so there is nothing to publish.
func (e *env) noteBranch(w *table.Writer, res commit.Result) {
	if e.branch == "" || !res.Unchanged {
		return
	}
	for name := range w.Table().Metadata().Refs() {
		if name == e.branch {
			return
		}
	}
	fmt.Fprintf(e.out, "branch %s was not created: main already holds exactly this input, so there is nothing to publish\n", e.branch)
}

// key parses a key of w's table. A key of one field may name the column
// of the input's Hive folders instead of the partition field
// (event_date=2026-07-14 for a days(event_ts) table, whose field is
// event_ts_day): the value is then read as the field's, and said so on
// stderr. Whether the rows agree is checked row by row by the replace.
func (e *env) key(w *table.Writer, text string) (partition.Key, error) {
	k, err := w.Key(text)
	if err == nil {
		return k, nil
	}
	fields := specFields(w)
	name, value, ok := strings.Cut(text, "=")
	if ok && len(fields) == 1 && !strings.Contains(text, "/") && name != fields[0].Name {
		if k2, err2 := w.Key(fields[0].Name + "=" + value); err2 == nil {
			e.note("%s: read as %s (the table's partition field is %s)", text, k2, fields[0].Name)
			return k2, nil
		}
	}
	return k, keyHelp(w, err)
}

// keyHelp adds the expected form of the table's key to a key error.
func keyHelp(w *table.Writer, err error) error {
	var forms []string
	for _, f := range specFields(w) {
		src := ""
		if col, ok := w.Table().Schema().FindFieldByID(f.SourceID()); ok {
			src = col.Type.String()
		}
		forms = append(forms, f.Name+"="+valueForm(f.Transform.String(), src))
	}
	if len(forms) == 0 {
		return fmt.Errorf("%w (the table is unpartitioned: give no key)", err)
	}
	return fmt.Errorf("%w (this table's keys look like %s)", err, strings.Join(forms, "/"))
}

// valueForm is the text form of the values of a transform of a column of
// type src.
func valueForm(transform, src string) string {
	switch {
	case transform == "identity" && src == "date", transform == "day":
		return "YYYY-MM-DD"
	case transform == "month":
		return "YYYY-MM"
	case transform == "year":
		return "YYYY"
	case transform == "hour":
		return "YYYY-MM-DD-HH"
	case strings.HasPrefix(transform, "bucket"), src == "int", src == "long":
		return "N"
	case transform == "identity" && strings.HasPrefix(src, "timestamp"):
		return "YYYY-MM-DDTHH:MM:SS"
	}
	return "VALUE"
}

// wholeTable names the one partition of an unpartitioned table, whose
// key is empty.
const wholeTable = "the whole table (unpartitioned)"

// partitionName is key for the person who reads it: wholeTable for the
// empty key.
func partitionName(key string) string {
	if key == "" {
		return wholeTable
	}
	return key
}

// partitionNames joins keys with spaces, each as partitionName words it;
// no key is "none".
func partitionNames(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = partitionName(k)
	}
	return strings.Join(names, " ")
}

// printResult prints what a replacement of one partition did, in words.
func (e *env) printResult(key string, w *table.Writer, res commit.Result) {
	key = partitionName(key)
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

// printPartitions prints what a write of several partitions did: the
// snapshot, then one line per partition.
func (e *env) printPartitions(w *table.Writer, res commit.Result) {
	if res.Unchanged {
		fmt.Fprintf(e.out, "unchanged: every partition of the input already holds exactly its rows from code version %s (snapshot %d); nothing written\n", w.CodeVersion(), res.SnapshotID)
	} else {
		fmt.Fprintf(e.out, "snapshot %d: %d %s, +%d rows in %d %s, -%d rows in %d %s, %d commit %s\n",
			res.SnapshotID, len(res.Partitions), plural(len(res.Partitions), "partition", "partitions"),
			res.AddedRows, res.AddedFiles, plural(res.AddedFiles, "file", "files"),
			res.DeletedRows, res.DeletedFiles, plural(res.DeletedFiles, "file", "files"), res.Attempts, plural(res.Attempts, "attempt", "attempts"))
	}
	for _, p := range res.PerPartition {
		state := fmt.Sprintf("+%d rows, -%d rows", p.AddedRows, p.DeletedRows)
		if p.Unchanged {
			state = "unchanged"
		}
		fmt.Fprintf(e.out, "  %s: %s\n", partitionName(p.Key), state)
	}
	if len(res.PerPartition) == 0 && len(res.Partitions) > 0 {
		fmt.Fprintf(e.out, "  partitions: %s\n", partitionNames(res.Partitions))
	}
	if res.LateRows > 0 {
		where := "dropped"
		if res.LateTable != "" {
			where = "written to " + res.LateTable
		}
		fmt.Fprintf(e.out, "%d late rows (outside the window): %s\n", res.LateRows, where)
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(e.out, "ignored input columns (no table column): %s\n", strings.Join(res.Ignored, ", "))
	}
}

// specFields lists the partition fields of w's table.
func specFields(w *table.Writer) []iceberg.PartitionField {
	spec := w.Table().Spec()
	var out []iceberg.PartitionField
	for _, f := range spec.Fields() {
		out = append(out, f)
	}
	return out
}
