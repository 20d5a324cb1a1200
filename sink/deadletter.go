package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
)

// Columns of a dead-letter table (see [WithDeadLetter]), besides
// [LateSource], [LateSourcePartition] and [LateOffset].
const (
	DeadLetterTarget = "_icerun_table"  // the table the message was for
	DeadLetterReason = "_icerun_reason" // why it is not a row
	DeadLetterRaw    = "_icerun_raw"    // the message as received (null for none)
)

// BadMessageError is returned by [Sink.Reject] without a dead-letter
// table: the message at Offset of Source cannot be a row of the table.
// Nothing of it was taken; the sink's positions stay below it, so a
// restart stops at it again.
type BadMessageError struct {
	Table  string
	Source SourcePartition
	Offset int64
	Reason string
}

func (e *BadMessageError) Error() string {
	return fmt.Sprintf("sink: %s: %s offset %d: bad message: %s", e.Table, e.Source, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrBadMessage) true.
func (e *BadMessageError) Is(target error) bool { return target == ErrBadMessage }

// Reject hands the sink the message at offset of from that the caller
// could not turn into a row (it does not decode, or does not fit the
// table): raw is the message as received, reason why. Offsets increase
// within a source partition across Write and Reject.
//
// With [WithDeadLetter] the message goes to the dead-letter table with
// raw, reason, table name and position, committed with the rows before it
// (see [Sink.Commit]) and exactly once like them: the position covers it,
// so a redelivery is dropped. It is counted in [Stats] and logged. Without
// a dead-letter table Reject returns a *[BadMessageError] and takes
// nothing: the rows before it can still be committed, and the stream
// stops there until the message is dealt with.
func (s *Sink) Reject(ctx context.Context, from SourcePartition, offset int64, raw []byte, reason string) error {
	if s.closed {
		return ErrClosed
	}
	defer s.notePending()
	mark := s.committed.get(from)
	if p, ok := s.pending[from]; ok {
		mark = p
	}
	if offset <= mark.Offset {
		s.stats.Redelivered++
		return nil
	}
	if s.cfg.deadLetter == nil {
		return &BadMessageError{Table: s.name, Source: from, Offset: offset, Reason: reason}
	}
	if s.dead == nil {
		side, err := s.openDeadLetter(ctx)
		if err != nil {
			return err
		}
		s.dead = side
	}
	rec := s.deadLetterBatch(from, offset, raw, reason)
	defer rec.Release()
	if err := s.dead.Write(ctx, s.deadLetterSource(from), []int64{offset}, rec); err != nil {
		return errors.Join(fmt.Errorf("sink: %s: dead letter: %w", s.name, err), s.discard(ctx))
	}
	if len(s.pending) == 0 {
		s.since = time.Now()
	}
	mark.Offset = offset
	s.pending[from] = mark
	s.stats.DeadLetters++
	s.cfg.log.Warn("sink dead letter", slog.String("table", s.name), slog.String("source", from.String()),
		slog.Int64("offset", offset), slog.String("reason", reason))
	if s.due() {
		_, err := s.Commit(ctx)
		return err
	}
	return nil
}

// deadLetterSource is the source partition of from in the dead-letter
// table's positions: named after the table too, so that sinks of several
// tables can share one dead-letter table.
func (s *Sink) deadLetterSource(from SourcePartition) SourcePartition {
	return SourcePartition{Source: s.name + " " + from.Source, Partition: from.Partition}
}

func (s *Sink) deadLetterBatch(from SourcePartition, offset int64, raw []byte, reason string) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	sc := arrow.NewSchema([]arrow.Field{
		{Name: DeadLetterTarget, Type: arrow.BinaryTypes.String},
		{Name: LateSource, Type: arrow.BinaryTypes.String},
		{Name: LateSourcePartition, Type: arrow.PrimitiveTypes.Int32},
		{Name: LateOffset, Type: arrow.PrimitiveTypes.Int64},
		{Name: DeadLetterReason, Type: arrow.BinaryTypes.String},
		{Name: DeadLetterRaw, Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(s.name)
	b.Field(1).(*array.StringBuilder).Append(from.Source)
	b.Field(2).(*array.Int32Builder).Append(from.Partition)
	b.Field(3).(*array.Int64Builder).Append(offset)
	b.Field(4).(*array.StringBuilder).Append(reason)
	if raw == nil {
		b.Field(5).AppendNull()
	} else {
		b.Field(5).(*array.BinaryBuilder).Append(raw)
	}
	return b.NewRecordBatch()
}

// openDeadLetter opens (creating it when missing) the dead-letter table's
// sink.
func (s *Sink) openDeadLetter(ctx context.Context) (*Sink, error) {
	ident := s.cfg.deadLetter
	_, err := s.cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		err = createDeadLetter(ctx, s.cat, ident)
	}
	if err != nil {
		return nil, fmt.Errorf("sink: dead-letter table %s: %w", ident, err)
	}
	side, err := Open(ctx, s.cat, ident, s.sideOptions()...)
	if err != nil {
		return nil, err
	}
	side.isSide = true
	return side, nil
}

func createDeadLetter(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier) error {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: DeadLetterTarget, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: LateSource, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: LateSourcePartition, Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 4, Name: LateOffset, Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 5, Name: DeadLetterReason, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 6, Name: DeadLetterRaw, Type: iceberg.PrimitiveTypes.Binary},
	)
	_, err := cat.CreateTable(ctx, ident, sch)
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // created concurrently
		return nil
	}
	return err
}
