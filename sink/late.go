package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/table"
)

// Columns the side table of late rows adds to the table's own.
const (
	LateReason          = "_icerun_late_reason"      // why the row is late
	LateSource          = "_icerun_source"           // SourcePartition.Source
	LateSourcePartition = "_icerun_source_partition" // SourcePartition.Partition
	LateOffset          = "_icerun_offset"           // the row's offset
)

// LateTable is the side table of ident that late rows go to under
// [table.RouteLate]: the same namespace, the name with "_sink_late"
// appended. It has the table's columns and [LateReason], [LateSource],
// [LateSourcePartition] and [LateOffset], and is created on the first late
// row. Its own snapshots record the positions of the late rows it holds,
// so that it takes every late row exactly once too.
//
// Deprecated: use [table.StreamLateTable], which this calls.
func LateTable(ident icetable.Identifier) icetable.Identifier { return table.StreamLateTable(ident) }

// lateRows is the side table's sink.
type lateRows struct {
	sink *Sink
}

// routeLate sends the late rows of cl (rows of rec) to the side table, or
// drops them by policy (classify refused them under table.RejectLate).
func (s *Sink) routeLate(ctx context.Context, from SourcePartition, offsets []int64, rec arrow.RecordBatch, cl classified) error {
	if s.cfg.late == table.DropLate {
		s.stats.LateDropped += int64(len(cl.lateRows))
		return nil
	}
	if s.late == nil {
		side, err := s.openLate(ctx)
		if err != nil {
			return err
		}
		s.late = side
	}
	rows, err := take(ctx, rec, cl.lateRows)
	if err != nil {
		return err
	}
	defer rows.Release()
	out, err := lateBatch(rows, from, offsets, cl)
	if err != nil {
		return err
	}
	defer out.Release()
	offs := make([]int64, len(cl.lateRows))
	for i, r := range cl.lateRows {
		offs[i] = offsets[r]
	}
	return s.late.sink.Write(ctx, from, offs, out)
}

// lateBatch is rows (the late rows, resolved to the table schema) without
// field ids (the side table resolves them by name), with the late columns.
func lateBatch(rows arrow.RecordBatch, from SourcePartition, offsets []int64, cl classified) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	fields := make([]arrow.Field, 0, rows.NumCols()+4)
	cols := make([]arrow.Array, 0, rows.NumCols()+4)
	for i, f := range rows.Schema().Fields() {
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable})
		cols = append(cols, rows.Column(i))
	}
	reason, src := array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	part, off := array.NewInt32Builder(mem), array.NewInt64Builder(mem)
	defer func() { reason.Release(); src.Release(); part.Release(); off.Release() }()
	for i, r := range cl.lateRows {
		reason.Append(cl.reasons[i])
		src.Append(from.Source)
		part.Append(from.Partition)
		off.Append(offsets[r])
	}
	extra := []arrow.Array{reason.NewArray(), src.NewArray(), part.NewArray(), off.NewArray()}
	defer func() {
		for _, a := range extra {
			a.Release()
		}
	}()
	fields = append(fields,
		arrow.Field{Name: LateReason, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: LateSource, Type: arrow.BinaryTypes.String},
		arrow.Field{Name: LateSourcePartition, Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: LateOffset, Type: arrow.PrimitiveTypes.Int64})
	cols = append(cols, extra...)
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rows.NumRows()), nil
}

// openLate opens (creating it when missing) the side table's sink.
func (s *Sink) openLate(ctx context.Context) (*lateRows, error) {
	ident := table.StreamLateTable(s.ident)
	_, err := s.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		err = createLate(ctx, s.cat, ident, s.tbl.Schema())
	}
	if err != nil {
		return nil, fmt.Errorf("sink: late table %s: %w", ident, err)
	}
	side, err := Open(ctx, s.cat, ident, s.sideOptions()...)
	if err != nil {
		return nil, err
	}
	side.isSide = true
	return &lateRows{sink: side}, nil
}

// sideOptions are the options of a side table's sink: the main sink's
// retry, lock, lineage, logging and expiry.
func (s *Sink) sideOptions() []Option {
	opts := []Option{WithRetry(s.cfg.policy), WithRunID(s.cfg.runID), WithCodeVersion(s.cfg.codeVersion), WithLogger(s.cfg.log)}
	if s.cfg.lock != nil {
		opts = append(opts, WithCommitLock(s.cfg.lock))
	}
	if s.cfg.expireEvery == 0 {
		opts = append(opts, WithoutSnapshotExpiry())
	} else {
		opts = append(opts, WithSnapshotExpiry(s.cfg.expireRetain, s.cfg.expireOlder, s.cfg.expireEvery))
	}
	return opts
}

func createLate(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, sch *iceberg.Schema) error {
	fields := sch.Fields()
	next := sch.HighestFieldID()
	add := func(name string, t iceberg.Type) {
		next++
		fields = append(fields, iceberg.NestedField{ID: next, Name: name, Type: t, Required: true})
	}
	add(LateReason, iceberg.PrimitiveTypes.String)
	add(LateSource, iceberg.PrimitiveTypes.String)
	add(LateSourcePartition, iceberg.PrimitiveTypes.Int32)
	add(LateOffset, iceberg.PrimitiveTypes.Int64)
	_, err := cat.CreateTable(ctx, ident, iceberg.NewSchema(0, fields...))
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // created concurrently
		return nil
	}
	return err
}
