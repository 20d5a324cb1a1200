package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

var (
	// ErrDuplicateKey is returned by [Writer.Upsert] when the input holds
	// two different rows with the same key that no [WithUpsertOrder] column
	// tells apart, or one key in two partitions. Nothing is committed.
	ErrDuplicateKey = errors.New("table: duplicate upsert key in the input")

	// ErrBadUpsertKey is returned by [Writer.Upsert] for no key columns, a
	// key column the table does not have, or one of a type that has no
	// canonical encoding (see package recordid).
	ErrBadUpsertKey = errors.New("table: bad upsert key")
)

// Upsert merges rows into the table by the key formed by keyColumns
// (top-level table columns, matched by name after schema resolution). For
// each partition the input touches, the partition's new content is its
// current rows, with every row whose key appears in the input replaced by
// the input's row, plus the input rows of new keys. Partitions the input
// does not touch keep their files. All touched partitions change in one
// snapshot, copy-on-write: each is rewritten whole, with no delete files,
// so every Iceberg reader sees the result. Empty input is a no-op.
//
// Duplicate keys in the input: identical rows (same values in every
// column) count once, so a batch that holds a redelivered event twice is
// the same as the batch with it once. Different rows with one key are
// decided by the [WithUpsertOrder] columns, the greatest order winning;
// without them, or on a tie, the call fails with [ErrDuplicateKey]. A key
// must map to one partition within one input. With [WithUpsertNewerOnly]
// a key's winning row is also compared with the rows the table holds of
// the key: one not newer changes nothing and is counted in
// [commit.Result].Stale. [Writer.ApplyChanges] is the write for change
// streams: it never fails on a tie, takes deletes, and moves a key
// between partitions.
//
// Rows already in a partition with a key of the input are all replaced,
// so upserting a key leaves exactly one row of it in its partition.
// Uniqueness is per partition: only the partition the input row goes to
// is read and rewritten, so an upsert whose new version of a key falls in
// another partition (a corrected event time on another day) keeps the old
// version in the old partition, and the table then holds both. Choose key
// columns that determine the partition (include the columns the partition
// is derived from, such as the event time) and a key never moves.
//
// Concurrency: the files a partition's new content was merged from are
// checked again in the commit attempt. When another writer changed the
// partition in between, the partition is read and merged again from the
// new state, so two concurrent upserts never lose each other's keys nor
// duplicate one. The merges and commit attempts together are bounded by
// the [WithRetry] budget (its Attempts), then [commit.ErrConflict].
// Without [WithUpsertNewerOnly] no other partition is read, so the
// guarantee is per partition, concurrent or not: two upserts of one key
// into two partitions leave a row in each. With it, every commit attempt
// also validates that no file committed since the stored rows were read
// may hold an input key, in any partition (by its bounds on the first key
// column); when one may, the stored rows are read and compared again
// within the same budget, so a concurrent newer row of a key in another
// partition makes the input's row Stale rather than a second live row.
//
// Memory is bounded by one partition's keys plus batch buffers: the input
// is resolved and spilled once to staged Parquet files, one set per
// partition (never committed, removed before Upsert returns; after a
// crash an orphan cleanup removes them), plus an 8-byte hash per input
// key to refuse a key found in two partitions. Each touched partition, its
// current rows and its spilled input are then streamed batch by batch, one
// partition at a time, and the rewrite is written in row groups of at
// most 131,072 rows unless the table sets write.parquet.row-group-limit
// (reading and writing at once then stay within a replace's memory).
//
// The result counts, as for a replace, every row the rewritten
// partitions held (DeletedRows) and hold now (AddedRows). A rerun whose
// merge gives exactly the content the partitions already hold, from the
// same code version, makes no snapshot (Unchanged). A partition's current
// rows are those its row-level delete files leave (position deletes,
// deletion vectors, equality deletes); the rewrite drops those delete
// files with the partition's data files. Partitions with rows in files of
// an older partition spec are refused with [commit.ErrUnsupported]:
// ReplacePartition them first. On format v3 the rewritten rows get new
// row ids (_row_id); see the README's caveats.
//
// Merge-on-read: when the table asks for it (write.upsert.mode,
// write.merge.mode or write.update.mode = merge-on-read) or the writer has
// [WithWriteMode]([MergeOnRead]), on format v2 and later, each touched
// partition keeps its data files: the input's winning rows go to new data
// files, and the live rows of their keys are deleted with delete files
// (position delete files on v2, deletion vectors on v3, an existing
// vector merged into the new one), all in one snapshot (operation
// overwrite). Only the partition's key columns are read to find them.
// The result then counts the rows deleted (DeletedRows) and added
// (AddedRows), and the data files added. A rerun of the same input from
// the same code version on the state it left makes no snapshot; a
// partition another writer changed meanwhile is located again on the new
// state. A partition with equality deletes makes the upsert
// copy-on-write. [Writer.Compact] folds the deletes back.
func (w *Writer) Upsert(ctx context.Context, rows array.RecordReader, keyColumns ...string) (commit.Result, error) {
	op := fmt.Sprintf("table: upsert into %s by (%s)", w.name, strings.Join(keyColumns, ", "))
	return w.observed(ctx, opUpsert, op, func(ctx context.Context) (commit.Result, error) {
		return w.upsert(ctx, op, rows, keyColumns...)
	})
}

func (w *Writer) upsert(ctx context.Context, op string, rows array.RecordReader, keyColumns ...string) (commit.Result, error) {
	if rows == nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, ErrNilInput)
	}
	if len(keyColumns) == 0 {
		return commit.Result{}, fmt.Errorf("%s: %w: no key columns", op, ErrBadUpsertKey)
	}
	tbl, spec, err := w.begin(ctx, op)
	if err != nil {
		return commit.Result{}, err
	}
	for _, c := range keyColumns {
		if _, ok := tbl.Schema().FindFieldByName(c); !ok || strings.Contains(c, ".") {
			return commit.Result{}, fmt.Errorf("%s: %w: %q is not a top-level column of the table", op, ErrBadUpsertKey, c)
		}
	}
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), tbl.NameMapping(), w.cfg.unknown)
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	chg, err := readChanges(ctx, tbl, rows, res, spec, keyColumns, w.cfg)
	defer func() { _ = chg.release() }() // best effort: an orphan cleanup removes what remains
	if err != nil {
		return commit.Result{}, fmt.Errorf("%s: %w", op, err)
	}
	// With WithUpsertNewerOnly a key another writer committed since the
	// stored rows were read makes the comparison again (keyGuard).
	return compareAgain(ctx, w, op, tbl, spec.ID(), func(tbl *icetable.Table) (commit.Result, error) {
		u := &upsert{w: w, op: op, spec: spec, schemaID: tbl.Schema().ID, res: res, keyColumns: keyColumns, chg: chg, cfg: w.cfg}
		if w.cfg.upsertNewerOnly {
			if err := u.readStored(ctx, tbl); err != nil {
				return commit.Result{}, fmt.Errorf("%s: %w", op, err)
			}
		}
		var result commit.Result
		var err error
		if w.cfg.mergeOnRead(tbl) {
			result, err = u.runMOR(ctx, tbl)
		} else {
			result, err = u.run(ctx, tbl)
		}
		result.Ignored = res.Ignored()
		for _, n := range u.stale {
			result.Stale += n
		}
		return result, err
	})
}

// readStored reads the greatest order the table holds of each input key,
// for WithUpsertNewerOnly, and guards the comparison (keyGuard).
func (u *upsert) readStored(ctx context.Context, tbl *icetable.Table) error {
	keys := map[string]struct{}{}
	rng := newKeyRange(u.keyColumns)
	for _, k := range u.chg.keys() {
		win, err := u.chg.resolve(ctx, k, rng)
		if err != nil {
			return err
		}
		for key := range win {
			keys[key] = struct{}{}
		}
	}
	stored, err := readStored(ctx, tbl, nil, u.keyColumns, u.cfg.upsertOrder, keys, rng)
	if err != nil {
		return err
	}
	u.stored, u.stale = make(map[string]orderKey, len(stored)), map[partition.Key]int64{}
	u.guard = newKeyGuard(tbl, rng)
	for key, s := range stored {
		u.stored[key] = s.ord
	}
	return nil
}

// upsert is one Upsert call after its input is read.
type upsert struct {
	w          *Writer
	op         string
	spec       *partition.Spec
	schemaID   int // the schema the input was resolved to
	res        *schema.Resolution
	keyColumns []string
	chg        *changes
	cfg        config
	// plan, when set, is the change of a changelog write (changelog.go):
	// the partitions it touches and each one's keys, in place of the
	// input's winners.
	plan *changePlan
	// stored, when set, holds the greatest order the table holds of each
	// input key (WithUpsertNewerOnly): input rows not newer change
	// nothing, and are counted in stale, by partition.
	stored map[string]orderKey
	stale  map[partition.Key]int64
	// guard, when set, is checked on every commit attempt: a file
	// committed since the comparison (stored, or plan) that may hold an
	// input key fails it with errDecidedOnOldState.
	guard *keyGuard
}
