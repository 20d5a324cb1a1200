package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// Columns the late table adds to the table's own.
const (
	LateRunID     = "_icerun_run_id"      // the run that routed the row
	LatePartition = "_icerun_partition"   // the canonical key of the partition the row belongs to
	LateWindow    = "_icerun_window"      // the last key of the window that routed it; the late table's partition
	LateReason    = "_icerun_late_reason" // why the row is late (optional: a late table created without it takes rows without it)
)

// Reasons a row is late, in the late table's LateReason column.
const (
	ReasonOutsideWindow = "outside the window"             // Writer.ReplaceWindow: its partition is not in the window
	ReasonPastRetention = "older than the retention bound" // Writer.ApplyChanges: a key the table does not know, older than its tombstones are kept
)

// LateTable is the side table of ident that [RouteLate] makes
// [Writer.ReplaceWindow] write to: the same namespace, the name with
// "_late" appended.
func LateTable(ident icetable.Identifier) icetable.Identifier { return sideTable(ident, "_late") }

// StreamLateTable is the side table of ident that [RouteLate] makes a sink
// (package sink) write to: the same namespace, the name with "_sink_late"
// appended. It is not [LateTable]: the sink's side table records each
// row's source position, ReplaceWindow's the window that routed it, so
// the two hold different columns.
func StreamLateTable(ident icetable.Identifier) icetable.Identifier {
	return sideTable(ident, "_sink_late")
}

// sideTable is the side table of ident named with suffix, in the same
// namespace.
func sideTable(ident icetable.Identifier, suffix string) icetable.Identifier {
	out := append(icetable.Identifier(nil), ident...)
	out[len(out)-1] += suffix
	return out
}

// lateRoute streams late rows into a replacement of the late table's
// partition for one window, run by a goroutine started on the first late
// row. Not safe for concurrent use.
type lateRoute struct {
	w      *Writer
	main   *icetable.Table
	in     *arrow.Schema // the resolved schema of the main table's rows
	out    *arrow.Schema // in without field ids, plus the late columns
	window string        // canonical text of the window's last key
	reason string        // the rows' LateReason

	started bool
	ch      chan arrow.RecordBatch
	stop    error // set before ch is closed to abort the replacement
	done    chan struct{}
	err     error // of the replacement, read after done
}

func (w *Writer) newLateRoute(main *icetable.Table, in *arrow.Schema, last partition.Key) *lateRoute {
	fields := make([]arrow.Field, 0, in.NumFields()+4)
	for _, f := range in.Fields() {
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
	}
	for _, n := range []string{LateRunID, LatePartition, LateWindow, LateReason} {
		fields = append(fields, arrow.Field{Name: n, Type: arrow.BinaryTypes.String})
	}
	return &lateRoute{w: w, main: main, in: in, out: arrow.NewSchema(fields, nil), window: last.String(), reason: ReasonOutsideWindow}
}

// send routes the rows of rec (the late rows of a batch whose row keys
// are keys/rowKey), taking ownership of rec.
func (l *lateRoute) send(ctx context.Context, rec arrow.RecordBatch, keys []partition.Key, rowKey []int, inside []bool) error {
	defer rec.Release()
	if !l.started {
		l.start(ctx, true)
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	cols := append([]arrow.Array(nil), rec.Columns()...)
	for range rec.NumRows() {
		b.Append(l.w.cfg.runID)
	}
	run := b.NewArray()
	defer run.Release()
	for _, ki := range rowKey {
		if !inside[ki] {
			b.Append(keys[ki].String())
		}
	}
	part := b.NewArray()
	defer part.Release()
	for range rec.NumRows() {
		b.Append(l.window)
	}
	win := b.NewArray()
	defer win.Release()
	for range rec.NumRows() {
		b.Append(l.reason)
	}
	why := b.NewArray()
	defer why.Release()
	out := array.NewRecordBatch(l.out, append(cols, run, part, win, why), rec.NumRows())
	select {
	case l.ch <- out:
		return nil
	case <-l.done:
		out.Release()
		return fmt.Errorf("late table: %w", l.err)
	case <-ctx.Done():
		out.Release()
		return ctx.Err()
	}
}

// start opens (or, when create, creates) the late table and starts the
// replacement of the window's partition.
func (l *lateRoute) start(ctx context.Context, create bool) bool {
	lw, err := l.w.lateWriter(ctx, l.main, create)
	l.started, l.ch, l.done = true, make(chan arrow.RecordBatch), make(chan struct{})
	if lw == nil && err == nil { // no late table and nothing to write
		close(l.done)
		return false
	}
	go func() {
		defer close(l.done)
		if err != nil {
			l.err = err
			for r := range l.ch {
				r.Release()
			}
			return
		}
		rdr := &pipeReader{l: l}
		defer rdr.Release()
		var key partition.Key
		if key, l.err = lateKey(lw.Table(), l.window); l.err == nil {
			_, l.err = lw.ReplacePartition(ctx, key, rdr)
		}
		for r := range l.ch { // the replacement stopped early
			r.Release()
		}
	}()
	return true
}

// finish ends the late rows and waits for the replacement: it returns the
// late table's name when something was written to it. A window without
// late rows still empties its partition of an existing late table.
func (l *lateRoute) finish(ctx context.Context) (string, error) {
	if l == nil {
		return "", nil
	}
	if !l.started && !l.start(ctx, false) {
		return "", nil
	}
	close(l.ch)
	<-l.done
	if l.err != nil {
		return "", l.err
	}
	return strings.Join(LateTable(l.w.ident), "."), nil
}

// abort stops the replacement without committing it.
func (l *lateRoute) abort(cause error) {
	if l == nil || !l.started {
		return
	}
	l.stop = cause
	close(l.ch)
	<-l.done
}

// lateKey is the late table's key of the window whose last key is window.
func lateKey(tbl *icetable.Table, window string) (partition.Key, error) {
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return partition.Key{}, err
	}
	ps := tbl.Spec()
	var fields []iceberg.PartitionField
	for _, f := range ps.Fields() {
		fields = append(fields, f)
	}
	if len(fields) != 1 || fields[0].Name != LateWindow {
		return partition.Key{}, fmt.Errorf("%w: late table %s is not partitioned by %s alone", commit.ErrUnsupported, tbl.Identifier(), LateWindow)
	}
	return spec.KeyFromValues(map[int]any{fields[0].FieldID: window})
}

// lateWriter opens the late table of the writer's table, creating it when
// create is set and it does not exist (nil, nil when it does not and
// create is not set).
func (w *Writer) lateWriter(ctx context.Context, main *icetable.Table, create bool) (*Writer, error) {
	ident := LateTable(w.ident)
	tbl, err := w.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) && create {
		tbl, err = createLate(ctx, w.cat, ident, main.Schema())
	}
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(ident, "."), err)
	}
	cfg := w.cfg
	cfg.unknown = schema.IgnoreUnknown // a late table created without LateReason
	return &Writer{cat: w.cat, ident: ident, name: strings.Join(ident, "."), cfg: cfg, tbl: tbl, obs: w.obs, commitTurn: newTurn()}, nil
}

// createLate creates the late table: the columns of sch, then the late
// columns (LateReason optional, the others required), partitioned by
// identity(LateWindow).
func createLate(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, sch *iceberg.Schema) (*icetable.Table, error) {
	fields := sch.Fields()
	next := sch.HighestFieldID()
	for _, n := range []string{LateRunID, LatePartition, LateWindow} {
		next++
		fields = append(fields, iceberg.NestedField{ID: next, Name: n, Type: iceberg.PrimitiveTypes.String, Required: true})
	}
	window := next
	next++
	fields = append(fields, iceberg.NestedField{ID: next, Name: LateReason, Type: iceberg.PrimitiveTypes.String})
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{window}, FieldID: 1000, Name: LateWindow, Transform: iceberg.IdentityTransform{}})
	tbl, err := cat.CreateTable(ctx, ident, iceberg.NewSchema(0, fields...), catalog.WithPartitionSpec(&spec))
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // created concurrently
		return cat.LoadTable(ctx, ident)
	}
	return tbl, err
}

// pipeReader is the array.RecordReader of the late rows sent to a
// lateRoute.
type pipeReader struct {
	l   *lateRoute
	cur arrow.RecordBatch
}

func (p *pipeReader) Retain()                        {}
func (p *pipeReader) Schema() *arrow.Schema          { return p.l.out }
func (p *pipeReader) RecordBatch() arrow.RecordBatch { return p.cur }
func (p *pipeReader) Record() arrow.RecordBatch      { return p.cur }

func (p *pipeReader) Release() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
}

func (p *pipeReader) Next() bool {
	p.Release()
	rec, ok := <-p.l.ch
	if !ok {
		return false
	}
	p.cur = rec
	return true
}

// Err is the abort cause: the replacement then fails and commits nothing.
func (p *pipeReader) Err() error { return p.l.stop }
