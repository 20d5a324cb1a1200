package table

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// TombstoneSuffix is appended to a table's name to name its
// [TombstoneTable].
const TombstoneSuffix = "_tombstones"

// TombstoneTable is the side table where [Writer.ApplyChanges] keeps the
// tombstones of ident: the same namespace, the name with
// [TombstoneSuffix] appended. It is unpartitioned, has the change spec's
// key and order columns (the table's types), one row per deleted key
// holding the greatest order it was deleted with, and is created on the
// first delete. It is an ordinary Iceberg table, upserted merge-on-read
// on format v2 and later.
func TombstoneTable(ident icetable.Identifier) icetable.Identifier {
	out := append(icetable.Identifier(nil), ident...)
	out[len(out)-1] += TombstoneSuffix
	return out
}

// tombstones is the tombstone table of one changelog write.
type tombstones struct {
	main *Writer
	cs   ChangeSpec
	cols []string // key then order columns
	w    *Writer  // the tombstone table's writer; nil while it does not exist
	// snapshot is the tombstone table's snapshot read reads (0: none).
	snapshot int64
}

// openTombstones opens the tombstone table of w, if it exists.
func (w *Writer) openTombstones(ctx context.Context, main *icetable.Table, cs ChangeSpec) (*tombstones, error) {
	ts := &tombstones{main: w, cs: cs, cols: columnsOf(cs.Key, cs.Order)}
	ident := TombstoneTable(w.ident)
	tbl, err := w.cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return ts, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
	}
	ts.w = w.tombstoneWriter(ident, tbl, cs)
	return ts, nil
}

// tombstoneWriter writes the tombstone table: upserts by the key that
// never lower a key's order.
func (w *Writer) tombstoneWriter(ident icetable.Identifier, tbl *icetable.Table, cs ChangeSpec) *Writer {
	cfg := w.cfg
	cfg.upsertOrder, cfg.upsertNewerOnly = cs.Order, true
	cfg.writeMode, cfg.unknown, cfg.branch, cfg.contract = MergeOnRead, schema.IgnoreUnknown, "", nil
	return &Writer{cat: w.cat, ident: ident, name: strings.Join(ident, "."), cfg: cfg, tbl: tbl, obs: w.obs, commitTurn: newTurn()}
}

// read returns the tombstone of each of keys that has one: its order.
func (ts *tombstones) read(ctx context.Context, keys map[string]struct{}, rng *keyRange) (map[string]orderKey, error) {
	out := map[string]orderKey{}
	if ts.w == nil {
		return out, nil
	}
	tbl, err := ts.w.head(ctx)
	if err != nil {
		return nil, err
	}
	ts.snapshot = snapshotID(tbl)
	stored, err := readStored(ctx, tbl, nil, ts.cs.Key, ts.cs.Order, keys, rng)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ts.w.name, err)
	}
	for key, s := range stored {
		out[key] = s.ord
	}
	return out, nil
}

// tombstoneGuard validates a changelog write's comparison against the
// tombstone table, as keyGuard does against the table: a tombstone of an
// input key newer than the comparison knew of (the one it read, or the
// one the call wrote) fails it with errDecidedOnOldState, and the input
// is compared again. A deleter commits its tombstones before its table,
// so a comparison checked on every commit attempt, and once more after
// the table's commit, cannot miss a delete that raced it (see
// Writer.ApplyChanges).
type tombstoneGuard struct {
	ts       *tombstones
	keys     map[string]struct{}
	rng      *keyRange
	known    map[string]orderKey // the greatest tombstone order known of each key
	snapshot int64               // the tombstone table's snapshot known to hold no newer one
}

// guard returns the tombstoneGuard of a comparison that read read and
// writes the delete rows of wrote (keys with their order).
func (ts *tombstones) guard(keys map[string]struct{}, rng *keyRange, read map[string]orderKey, wrote map[string]orderKey) *tombstoneGuard {
	known := make(map[string]orderKey, len(read)+len(wrote))
	for key, o := range read {
		known[key] = o
	}
	for key, o := range wrote {
		if k, ok := known[key]; !ok || o.compare(k) > 0 {
			known[key] = o
		}
	}
	return &tombstoneGuard{ts: ts, keys: keys, rng: rng, known: known, snapshot: ts.snapshot}
}

// check reads the tombstone table's head, when it moved, and fails with
// errDecidedOnOldState when it holds a tombstone of an input key newer
// than the known one.
func (g *tombstoneGuard) check(ctx context.Context) error {
	ident := TombstoneTable(g.ts.main.ident)
	tbl, err := g.ts.main.cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable):
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
	}
	if snapshotID(tbl) == g.snapshot {
		return nil
	}
	stored, err := readStored(ctx, tbl, nil, g.ts.cs.Key, g.ts.cs.Order, g.keys, g.rng)
	if err != nil {
		return fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
	}
	for key, s := range stored {
		if k, ok := g.known[key]; !ok || s.ord.compare(k) > 0 {
			return fmt.Errorf("%w: %s, snapshot %d, holds a newer tombstone of an input key", errDecidedOnOldState, strings.Join(ident, "."), snapshotID(tbl))
		}
	}
	g.snapshot = snapshotID(tbl)
	return nil
}

// write upserts the tombstones of the delete rows want picks (by input
// partition, each key with its row's hash) from the spilled input, and
// returns how many it wrote. A tombstone the table holds already, or a
// newer one, stays as it is: a rerun writes nothing.
func (ts *tombstones) write(ctx context.Context, chg *changes, res *schema.Resolution, want map[partition.Key]map[string]fingerprint.Hash) (int64, error) {
	if ts.w == nil {
		main, err := ts.main.head(ctx)
		if err != nil {
			return 0, err
		}
		ident := TombstoneTable(ts.main.ident)
		tbl, err := createTombstones(ctx, ts.main.cat, ident, main, ts.cols)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
		}
		ts.w = ts.main.tombstoneWriter(ident, tbl, ts.cs)
	}
	var fields []arrow.Field
	var idx []int
	for _, c := range ts.cols {
		i := res.Schema().FieldIndices(c)
		if len(i) != 1 {
			return 0, fmt.Errorf("internal error: column %q is not in the input", c)
		}
		f := res.Schema().Field(i[0])
		fields, idx = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true}), append(idx, i[0])
	}
	sc := arrow.NewSchema(fields, nil)
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	emitted := map[string]bool{}
	var n int64
	for _, k := range chg.keys() {
		if want[k] == nil {
			continue
		}
		err := chg.pick(ctx, k, want[k], emitted, func(rec arrow.RecordBatch) error {
			defer rec.Release()
			cols := make([]arrow.Array, len(idx))
			for i, j := range idx {
				cols[i] = rec.Column(j)
			}
			recs = append(recs, array.NewRecordBatch(sc, cols, rec.NumRows()))
			n += rec.NumRows()
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	rdr, err := array.NewRecordReader(sc, recs)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	if _, err := ts.w.Upsert(ctx, rdr, ts.cs.Key...); err != nil {
		return 0, err
	}
	return n, nil
}

// createTombstones creates the tombstone table: the columns cols of main,
// optional, unpartitioned, of main's format version.
func createTombstones(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, main *icetable.Table, cols []string) (*icetable.Table, error) {
	fields := make([]iceberg.NestedField, len(cols))
	for i, c := range cols {
		f, ok := main.Schema().FindFieldByName(c)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not a column of the table", ErrBadChangeSpec, c)
		}
		fields[i] = iceberg.NestedField{ID: i + 1, Name: f.Name, Type: f.Type, Doc: f.Doc}
	}
	props := iceberg.Properties{"format-version": strconv.Itoa(main.Metadata().Version())}
	tbl, err := cat.CreateTable(ctx, ident, iceberg.NewSchema(0, fields...), catalog.WithProperties(props))
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // created concurrently
		return cat.LoadTable(ctx, ident)
	}
	return tbl, err
}

// retentionSpan is d in the units of column col of tbl (a timestamp or
// date column).
func retentionSpan(tbl *icetable.Table, col string, d time.Duration) (int64, error) {
	f, ok := tbl.Schema().FindFieldByName(col)
	if !ok {
		return 0, fmt.Errorf("%w: %q is not a column of the table", ErrBadChangeSpec, col)
	}
	switch f.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		return d.Microseconds(), nil
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return d.Nanoseconds(), nil
	case iceberg.DateType:
		if d%(24*time.Hour) != 0 {
			return 0, fmt.Errorf("%w: retention %s of date column %q is not a whole number of days", ErrBadChangeSpec, d, col)
		}
		return int64(d / (24 * time.Hour)), nil
	}
	return 0, fmt.Errorf("%w: a retention needs a timestamp or date first order column, %q is %s", ErrBadChangeSpec, col, f.Type)
}

// lateBound is the oldest first order value an event of a key the table
// does not know may have to be applied: the newest first order value the
// table's data files (by their upper bounds), the tombstone table's and
// the input hold, minus the retention; nil without a retention.
func (w *Writer) lateBound(ctx context.Context, tbl *icetable.Table, ts *tombstones, in map[string]*change, cs ChangeSpec) (*orderValue, error) {
	if cs.Retention == 0 {
		return nil, nil
	}
	span, err := retentionSpan(tbl, cs.Order[0], cs.Retention)
	if err != nil {
		return nil, err
	}
	var newest orderValue
	for _, c := range in {
		if len(c.ord) > 0 && c.ord[0].compare(newest) > 0 {
			newest = c.ord[0]
		}
	}
	tables := []*icetable.Table{tbl}
	if ts.w != nil {
		tables = append(tables, ts.w.Table())
	}
	for _, t := range tables {
		v, err := newestBound(ctx, t, cs.Order[0])
		if err != nil {
			return nil, err
		}
		if v.compare(newest) > 0 {
			newest = v
		}
	}
	if !newest.valid {
		return nil, nil
	}
	return &orderValue{valid: true, i: newest.i - span}, nil
}

// newestBound is the greatest upper bound of column col over tbl's live
// data files (invalid when none has one).
func newestBound(ctx context.Context, tbl *icetable.Table, col string) (orderValue, error) {
	var out orderValue
	if tbl.CurrentSnapshot() == nil {
		return out, nil
	}
	f, ok := tbl.Schema().FindFieldByName(col)
	if !ok {
		return out, nil
	}
	_, narrow := f.Type.(iceberg.DateType)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return out, err
	}
	for _, t := range tasks {
		if v, ok := littleEndianInt(t.File.UpperBoundValues()[f.ID], narrow); ok && (!out.valid || v > out.i) {
			out = orderValue{valid: true, i: v}
		}
	}
	return out, nil
}

// prune deletes the tombstones whose first order value is below bound
// (forgotten ones), merge-on-read, in a commit of the tombstone table of
// its own after the table's: a tombstone pruned or not reads the same
// once it is older than the bound. Nothing is read or committed when no
// file of the tombstone table may hold one. Format v1 tombstone tables
// are not pruned.
func (ts *tombstones) prune(ctx context.Context, bound *orderValue) error {
	if ts.w == nil || bound == nil {
		return nil
	}
	tbl, err := ts.w.head(ctx)
	if err != nil || tbl.CurrentSnapshot() == nil || tbl.Metadata().Version() < 2 {
		return err
	}
	col := ts.cs.Order[0]
	f, ok := tbl.Schema().FindFieldByName(col)
	if !ok {
		return nil
	}
	var lit iceberg.BooleanExpression
	ref := iceberg.Reference(col)
	_, narrow := f.Type.(iceberg.DateType)
	switch f.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType:
		lit = iceberg.LessThan(ref, iceberg.Timestamp(bound.i))
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		lit = iceberg.LessThan(ref, iceberg.TimestampNano(bound.i))
	case iceberg.DateType:
		lit = iceberg.LessThan(ref, iceberg.Date(int32(bound.i)))
	default:
		return nil
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	old := false
	for _, t := range tasks {
		if v, ok := littleEndianInt(t.File.LowerBoundValues()[f.ID], narrow); !ok || v < bound.i {
			old = true
			break
		}
	}
	if !old {
		return nil
	}
	key, err := ts.w.Key("")
	if err != nil {
		return err
	}
	_, err = ts.w.DeleteWhere(ctx, key, lit)
	return err
}
