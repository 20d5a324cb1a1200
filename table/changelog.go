package table

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// ErrBadChangeSpec is returned by [Writer.ApplyChanges] for a ChangeSpec
// without key or order columns, with a column the table does not have,
// or with a Retention its first order column cannot take. Nothing is
// committed.
var ErrBadChangeSpec = errors.New("table: bad change spec")

// ChangeSpec says how [Writer.ApplyChanges] reads its rows.
type ChangeSpec struct {
	// Key are the key columns (top-level table columns): the table holds
	// one row per key.
	Key []string
	// Order are the ordering columns, compared lexicographically (the
	// first decides, the next breaks its ties, and so on; a null is
	// lower than every value): a version, a log sequence number, an
	// event time, then a source offset as the last tie-breaker. Each is
	// an integer, date, time, timestamp or string table column.
	Order []string
	// Delete says which rows are deletes; the zero value makes every row
	// an upsert.
	Delete DeleteWhen
	// Retention is how long a tombstone counts, in the first order
	// column's time (a timestamp or date column): a key deleted with an
	// order older than the newest order the table, its tombstones and
	// the input hold minus Retention is forgotten (and deleted from the
	// tombstone table after the table's commit), and an event older
	// than that bound for a key the table does not know is routed to the
	// late table ([LateTable]) instead of applied, and counted in
	// [commit.Result].LateRows. Zero keeps tombstones for ever and routes
	// nothing.
	Retention time.Duration
	// Ties says who wins when a key's winning input row has the same
	// order as what the table holds of it (its live row or tombstone):
	// StoredWinsTies (the default) or InputWinsTies.
	Ties TieRule
}

// TieRule says which wins a tie of order between an input row of
// [Writer.ApplyChanges] and the row or tombstone the table holds of the
// key.
type TieRule int

const (
	// StoredWinsTies keeps what the table holds: an input row of equal
	// order is Stale, so a rerun of a call finds everything stale. The
	// default.
	StoredWinsTies TieRule = iota
	// InputWinsTies applies an input row of equal order, as if it came
	// later: for a caller that never passes the same change twice and
	// whose input follows the stored rows in the source, such as the
	// sink, which drops a redelivery by its source position before the
	// change (the source offset is its last tie-breaker). A rerun of a
	// call that committed rewrites its rows.
	InputWinsTies
)

// DeleteWhen picks the delete rows of a changelog write: those whose
// Column holds Value, compared as text (Arrow's ValueStr; the string
// itself for a string column), e.g. {Column: "event_type", Value:
// "deleted"}. A null is never a delete.
type DeleteWhen struct {
	Column string
	Value  string
}

// ChangeResult is what [Writer.ApplyChanges] did: the commit of the
// table (Result; Stale counts the input keys whose change was not newer
// than what the table holds, LateRows those routed to LateTable), and
// the keys it changed.
type ChangeResult struct {
	commit.Result
	Upserted int64 // keys whose input row is now their row in the table
	Deleted  int64 // keys whose live rows were deleted
	// Tombstones counts the tombstones written to [TombstoneTable]: one
	// per key deleted by a delete row of the input.
	Tombstones int64
}

// ApplyChanges applies a change stream's rows to the table, which keeps
// the latest state of each key: each row carries the key columns, the
// ordering columns and (by cs.Delete) whether it is a delete. For each
// key the greatest order among the input's rows, the table's live rows
// of the key and its tombstone wins. An input key whose winning row is
// not newer than what the table holds changes nothing (counted in
// Stale, never an error), so a late or redelivered older event never
// overwrites a newer state. Among input rows of one key with an equal
// order the last in input order wins; a tie is never an error.
//
// A winning upsert row replaces every live row of its key, in whichever
// partition it is: a key whose partition source column changed leaves no
// old version in its old partition. A winning delete deletes the key's
// live rows and leaves a tombstone (the key and its order) in the side
// table [TombstoneTable], which readers of the table never see, so a late
// older event of a deleted key stays a no-op (see cs.Retention for how
// long). Upserts and deletes of one call are one snapshot of the table:
// merge-on-read (a row delta: new data files, position deletes on
// format v2 or deletion vectors on v3) when the table or the writer asks
// for it, as [Writer.Upsert] decides, else copy-on-write (each touched
// partition rewritten). Only the key and order columns of the table's
// data files are read to compare, and only of files whose bounds on the
// first key column may hold an input key.
//
// Tombstones are committed to the tombstone table first, by an upsert
// that never lowers a key's tombstone, then the table: a crash between
// the two leaves a tombstone newer than the key's live row, and the
// next call that meets the key (a rerun of the same call) deletes the
// row. A rerun of a call that committed is a no-op: every key is Stale
// and no snapshot is made (Unchanged).
//
// Concurrency: every commit attempt validates, as Java Iceberg's RowDelta
// does with a conflict filter, that the partitions the call changes hold
// exactly the files it planned on, and that no data or delete file
// committed since the snapshot the comparison read, in any partition, may
// hold an input key (by its bounds on the first key column, the pruning
// of the comparison). When one does (another Writer's ApplyChanges,
// Upsert or delete of one of the keys, in whichever partition), the input
// is compared again with the new state, within the [WithRetry] budget,
// then [commit.ErrConflict]: two concurrent calls leave one live row per
// key, the one with the greatest order. The tombstones are validated
// too: every commit attempt, and once more the call after its table's
// commit, reads the tombstone table when it moved since the comparison,
// and compares again when it holds a tombstone of an input key newer
// than the comparison knew; a call that wrote tombstones and committed
// nothing to the table checks the table's head after its tombstones
// landed. Since a deleter commits its tombstones before it reads the
// table again, and an upserter commits the table before it reads the
// tombstones again, one of two racing calls sees the other's write: a
// concurrent newer delete of a key the table does not hold leaves the
// key deleted. When the upserter is the one that sees it after its own
// commit, the deletion is a second snapshot of the call (readers may see
// the row between the two).
func (w *Writer) ApplyChanges(ctx context.Context, rows array.RecordReader, cs ChangeSpec) (ChangeResult, error) {
	op := fmt.Sprintf("table: apply changes to %s by (%s)", w.name, strings.Join(cs.Key, ", "))
	ctx, done := w.observe(ctx, opApplyChanges, op)
	res, err := w.applyChanges(ctx, op, rows, cs)
	done(res.Result, err)
	return res, err
}

func (w *Writer) applyChanges(ctx context.Context, op string, rows array.RecordReader, cs ChangeSpec) (ChangeResult, error) {
	if rows == nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, ErrNilInput)
	}
	if w.cfg.branch != "" {
		return ChangeResult{}, fmt.Errorf("%s: %w: changelog writes go to main only", op, commit.ErrUnsupported)
	}
	tbl, err := w.head(ctx)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := snapshotcommit.Supported(tbl.Metadata()); err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := cs.Check(tbl); err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	res, err := schema.Resolve(rows.Schema(), tbl.Schema(), tbl.NameMapping(), w.cfg.unknown)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	chg, in, rng, err := readChangelog(ctx, tbl, rows, res, spec, cs, w.cfg)
	defer func() { _ = chg.release() }() // best effort: an orphan cleanup removes what remains
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	keys := make(map[string]struct{}, len(in))
	for key := range in {
		keys[key] = struct{}{}
	}
	var tombs int64 // written in every round: a round compared again may have written some
	return compareAgain(ctx, w, op, tbl, spec.ID(), func(tbl *icetable.Table) (ChangeResult, error) {
		out, err := w.applyOnce(ctx, op, tbl, spec, res, chg, in, keys, rng, cs)
		tombs += out.Tombstones
		out.Ignored, out.Tombstones = res.Ignored(), tombs
		return out, err
	})
}

// Check reports whether [Writer.ApplyChanges] takes cs on tbl: it fails
// with [ErrBadChangeSpec] for a cs without key or order columns, with a
// column that is not a top-level column of tbl, with a negative
// Retention, or with a Retention on a first order column that is not a
// timestamp or date (or, on a date, not a whole number of days).
// ApplyChanges checks it on every call; the sink's upsert mode checks it
// when it opens.
func (cs ChangeSpec) Check(tbl *icetable.Table) error {
	if len(cs.Key) == 0 {
		return fmt.Errorf("%w: no key columns", ErrBadChangeSpec)
	}
	if len(cs.Order) == 0 {
		return fmt.Errorf("%w: no order columns", ErrBadChangeSpec)
	}
	cols := slices.Concat(cs.Key, cs.Order)
	if cs.Delete.Column != "" {
		cols = append(cols, cs.Delete.Column)
	}
	for _, c := range cols {
		if _, ok := tbl.Schema().FindFieldByName(c); !ok || strings.Contains(c, ".") {
			return fmt.Errorf("%w: %q is not a top-level column of the table", ErrBadChangeSpec, c)
		}
	}
	if cs.Retention < 0 {
		return fmt.Errorf("%w: negative retention %s", ErrBadChangeSpec, cs.Retention)
	}
	if cs.Ties != StoredWinsTies && cs.Ties != InputWinsTies {
		return fmt.Errorf("%w: unknown tie rule %d", ErrBadChangeSpec, cs.Ties)
	}
	if cs.Retention > 0 {
		if _, err := retentionSpan(tbl, cs.Order[0], cs.Retention); err != nil {
			return err
		}
	}
	return nil
}

// applyOnce compares the input with tbl's rows and tombstones, writes the
// tombstones and commits the table's change. It fails with
// errDecidedOnOldState when the table moved before the commit in a
// partition it changes, or, in any partition, by a file that may hold an
// input key (keyGuard).
func (w *Writer) applyOnce(ctx context.Context, op string, tbl *icetable.Table, spec *partition.Spec, res *schema.Resolution, chg *changes, in map[string]*change, keys map[string]struct{}, rng *keyRange, cs ChangeSpec) (ChangeResult, error) {
	stored, placedFiles, err := readStoredPlaced(ctx, tbl, spec, cs.Key, cs.Order, keys, rng)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	ts, err := w.openTombstones(ctx, tbl, cs)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	tombs, err := ts.read(ctx, keys, rng)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	read := maps.Clone(tombs)
	bound, err := w.lateBound(ctx, tbl, ts, in, cs)
	if err != nil {
		return ChangeResult{}, fmt.Errorf("%s: %w", op, err)
	}
	for key, t := range tombs {
		if bound != nil && len(t) > 0 && t[0].compare(*bound) < 0 {
			delete(tombs, key) // kept longer than the retention: forgotten
		}
	}
	d := decide(in, stored, tombs, bound, cs.Ties)
	d.plan.snapshot, d.plan.rng = snapshotID(tbl), rng
	d.plan.known = &placement{stored: stored, files: placedFiles}
	var out ChangeResult
	out.Stale, out.Upserted, out.Deleted = d.stale, d.upserted, d.deleted
	if len(d.tombs) > 0 {
		n, err := ts.write(ctx, chg, res, d.tombs)
		if err != nil {
			return out, fmt.Errorf("%s: tombstones: %w", op, err)
		}
		out.Tombstones = n
	}
	if len(d.late) > 0 {
		if out.LateTable, err = w.routeLateChanges(ctx, tbl, chg, res, d.late); err != nil {
			return out, fmt.Errorf("%s: late rows: %w", op, err)
		}
		out.LateRows = int64(len(d.late))
	}
	wrote := map[string]orderKey{}
	for _, m := range d.tombs {
		for key := range m {
			wrote[key] = in[key].ord
		}
	}
	tg := ts.guard(keys, rng, read, wrote)
	guard := newKeyGuard(tbl, rng)
	guard.side = tg.check
	u := &upsert{w: w, op: op, spec: spec, schemaID: tbl.Schema().ID, res: res, keyColumns: cs.Key, chg: chg, cfg: w.cfg, plan: &d.plan, guard: guard}
	var r commit.Result
	if w.cfg.mergeOnRead(tbl) {
		r, err = u.runMOR(ctx, tbl)
	} else {
		r, err = u.run(ctx, tbl)
	}
	r.Stale, r.LateRows, r.LateTable = out.Stale, out.LateRows, out.LateTable
	out.Result = r
	if err == nil {
		err = recheck(ctx, w, guard, tg, r, len(d.tombs) > 0)
	}
	if err == nil {
		if err = ts.prune(ctx, bound); err != nil {
			err = fmt.Errorf("%s: committed, but pruning the forgotten tombstones failed: %w", op, err)
		}
	}
	return out, err
}

// recheck validates, once more after the table's commit, the comparison
// of a changelog write that committed (the tombstone table) or wrote
// tombstones and committed nothing (the table): of two racing calls, an
// upsert that commits the table then reads the tombstones and a delete
// that commits its tombstones then reads the table, at least one sees
// the other's write, and compares again (errDecidedOnOldState).
func recheck(ctx context.Context, w *Writer, guard *keyGuard, tg *tombstoneGuard, r commit.Result, wroteTombs bool) error {
	if !r.Unchanged {
		return tg.check(ctx)
	}
	if !wroteTombs {
		return nil
	}
	head, err := w.head(ctx)
	if err != nil {
		return err
	}
	return guard.check(ctx, head)
}

// decision is what a changelog write does, key by key.
type decision struct {
	plan     changePlan
	tombs    map[partition.Key]map[string]fingerprint.Hash // delete rows to keep as tombstones, by input partition
	late     map[partition.Key]map[string]fingerprint.Hash // rows routed to the late table, by input partition
	stale    int64
	upserted int64
	deleted  int64
}

// decide compares each input key's change with what the table holds of it
// (stored: its live rows; tombs: its tombstone, nil when none or
// forgotten). bound, when not nil, is the oldest first order value an
// event of a key the table does not know may have to be applied; ties
// says who wins an equal order.
func decide(in map[string]*change, stored map[string]*storedKey, tombs map[string]orderKey, bound *orderValue, ties TieRule) decision {
	d := decision{
		plan:  changePlan{win: map[partition.Key]map[string]fingerprint.Hash{}},
		tombs: map[partition.Key]map[string]fingerprint.Hash{},
		late:  map[partition.Key]map[string]fingerprint.Hash{},
	}
	set := func(m map[partition.Key]map[string]fingerprint.Hash, k partition.Key, key string, h fingerprint.Hash) {
		if m[k] == nil {
			m[k] = map[string]fingerprint.Hash{}
		}
		m[k][key] = h
	}
	deleteLive := func(key string, s *storedKey) {
		for _, p := range s.parts {
			if _, ok := d.plan.win[p][key]; !ok {
				set(d.plan.win, p, key, fingerprint.Hash{})
			}
		}
	}
	for key, c := range in {
		s, live := stored[key], stored[key] != nil
		t, tomb := tombs[key]
		var cur orderKey
		if live {
			cur = s.ord
		}
		if tomb && (!live || t.compare(cur) > 0) {
			cur = t
		}
		if cmp := c.ord.compare(cur); (live || tomb) && (cmp < 0 || cmp == 0 && ties == StoredWinsTies) {
			d.stale++
			if live && tomb && t.compare(s.ord) > 0 {
				// A tombstone newer than the live row: a call that wrote
				// its tombstones and did not commit the table.
				deleteLive(key, s)
				d.deleted++
			}
			continue
		}
		if !live && !tomb && bound != nil && len(c.ord) > 0 && c.ord[0].compare(*bound) < 0 {
			set(d.late, c.part, key, c.hash)
			continue
		}
		if live {
			deleteLive(key, s)
		}
		if c.del {
			set(d.tombs, c.part, key, c.hash)
			if live {
				d.deleted++
			}
			continue
		}
		set(d.plan.win, c.part, key, c.hash)
		d.upserted++
	}
	for k := range d.plan.win {
		d.plan.parts = append(d.plan.parts, k)
	}
	slices.SortFunc(d.plan.parts, cmpKeys)
	return d
}
