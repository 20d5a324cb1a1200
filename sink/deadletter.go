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
	// The message's envelope, null when the source has none (see
	// [Message]): its topic, key, headers (a list of key and value
	// structs, in order) and timestamp. A dead-letter table created
	// without them gets them added (optional columns) by the first sink
	// that writes to it.
	DeadLetterTopic     = "_icerun_topic"
	DeadLetterKey       = "_icerun_key"
	DeadLetterHeaders   = "_icerun_headers"
	DeadLetterTimestamp = "_icerun_timestamp"
)

// Message is a message as the source delivered it, for
// [Sink.RejectMessage]: the dead-letter table keeps all of it, so that a
// replay can produce it again as it was (re-keyed, with its headers).
type Message struct {
	Topic   string // "" for none
	Key     []byte // nil for none
	Value   []byte // nil for none (a Kafka tombstone)
	Headers []Header
	Time    time.Time // the message's timestamp; zero for none
}

// Header is one header of a [Message].
type Header struct {
	Key   string
	Value []byte
}

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
	return s.RejectMessage(ctx, from, offset, Message{Value: raw}, reason)
}

// RejectMessage is [Sink.Reject] of a message with its envelope (topic,
// key, headers, timestamp), which the dead-letter table keeps beside its
// value in [DeadLetterTopic], [DeadLetterKey], [DeadLetterHeaders] and
// [DeadLetterTimestamp].
func (s *Sink) RejectMessage(ctx context.Context, from SourcePartition, offset int64, m Message, reason string) error {
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
	rec := s.deadLetterBatch(from, offset, m, reason)
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
	_, err := s.CommitIfDue(ctx)
	return err
}

// deadLetterSource is the source partition of from in the dead-letter
// table's positions: named after the table too, so that sinks of several
// tables can share one dead-letter table.
func (s *Sink) deadLetterSource(from SourcePartition) SourcePartition {
	return SourcePartition{Source: s.name + " " + from.Source, Partition: from.Partition}
}

func (s *Sink) deadLetterBatch(from SourcePartition, offset int64, m Message, reason string) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, deadLetterArrow)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(s.name)
	b.Field(1).(*array.StringBuilder).Append(from.Source)
	b.Field(2).(*array.Int32Builder).Append(from.Partition)
	b.Field(3).(*array.Int64Builder).Append(offset)
	b.Field(4).(*array.StringBuilder).Append(reason)
	appendBytes(b.Field(5).(*array.BinaryBuilder), m.Value)
	if m.Topic == "" {
		b.Field(6).AppendNull()
	} else {
		b.Field(6).(*array.StringBuilder).Append(m.Topic)
	}
	appendBytes(b.Field(7).(*array.BinaryBuilder), m.Key)
	hb := b.Field(8).(*array.ListBuilder)
	if m.Headers == nil {
		hb.AppendNull()
	} else {
		hb.Append(true)
		st := hb.ValueBuilder().(*array.StructBuilder)
		for _, h := range m.Headers {
			st.Append(true)
			st.FieldBuilder(0).(*array.StringBuilder).Append(h.Key)
			appendBytes(st.FieldBuilder(1).(*array.BinaryBuilder), h.Value)
		}
	}
	if m.Time.IsZero() {
		b.Field(9).AppendNull()
	} else {
		b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(m.Time.UnixMicro()))
	}
	return b.NewRecordBatch()
}

// appendBytes appends v, or a null for nil.
func appendBytes(b *array.BinaryBuilder, v []byte) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.Append(v)
}

// deadLetterHeader is the struct of one header in [DeadLetterHeaders].
var deadLetterHeader = arrow.StructOf(
	arrow.Field{Name: "key", Type: arrow.BinaryTypes.String, Nullable: true},
	arrow.Field{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: true},
)

// deadLetterArrow is the schema of the batches written to a dead-letter
// table (resolved by name to its columns).
var deadLetterArrow = arrow.NewSchema([]arrow.Field{
	{Name: DeadLetterTarget, Type: arrow.BinaryTypes.String},
	{Name: LateSource, Type: arrow.BinaryTypes.String},
	{Name: LateSourcePartition, Type: arrow.PrimitiveTypes.Int32},
	{Name: LateOffset, Type: arrow.PrimitiveTypes.Int64},
	{Name: DeadLetterReason, Type: arrow.BinaryTypes.String},
	{Name: DeadLetterRaw, Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: DeadLetterTopic, Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: DeadLetterKey, Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: DeadLetterHeaders, Type: arrow.ListOfField(arrow.Field{Name: "element", Type: deadLetterHeader, Nullable: true}), Nullable: true},
	{Name: DeadLetterTimestamp, Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

// deadLetterEnvelope are the optional columns of a dead-letter table that
// hold a message's envelope; a table created without them gets them
// added. The field ids are the table's to assign.
func deadLetterEnvelope() []Column {
	return []Column{
		{Name: DeadLetterTopic, Type: iceberg.PrimitiveTypes.String},
		{Name: DeadLetterKey, Type: iceberg.PrimitiveTypes.Binary},
		{Name: DeadLetterHeaders, Type: &iceberg.ListType{ElementID: 1, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 2, Name: "key", Type: iceberg.PrimitiveTypes.String},
			{ID: 3, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
		}}}},
		{Name: DeadLetterTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz},
	}
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
	var missing []Column
	for _, c := range deadLetterEnvelope() {
		if _, ok := side.tbl.Schema().FindFieldByName(c.Name); !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		if err := side.AddColumns(ctx, missing...); err != nil {
			return nil, fmt.Errorf("sink: dead-letter table %s: %w", ident, err)
		}
	}
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
		iceberg.NestedField{ID: 7, Name: DeadLetterTopic, Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 8, Name: DeadLetterKey, Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 9, Name: DeadLetterHeaders, Type: &iceberg.ListType{ElementID: 10, Element: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 11, Name: "key", Type: iceberg.PrimitiveTypes.String},
			{ID: 12, Name: "value", Type: iceberg.PrimitiveTypes.Binary},
		}}}},
		iceberg.NestedField{ID: 13, Name: DeadLetterTimestamp, Type: iceberg.PrimitiveTypes.TimestampTz},
	)
	_, err := cat.CreateTable(ctx, ident, sch)
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // created concurrently
		return nil
	}
	return err
}
