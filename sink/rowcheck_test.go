package sink_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/sink"
)

// A batch with a row the table cannot hold fails with a RowError naming
// the first such row, and nothing of it is kept: the rows around it can be
// written again and the bad one rejected, as the Kafka adapter does.
func TestWriteNamesTheRowTheTableCannotHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "amount_t", Transform: iceberg.TruncateTransform{Width: 100}})
	ident := catalogtest.CreateTable(t, cat, "amounts", sch, spec, nil)
	dead := ident[: len(ident)-1 : len(ident)-1]
	dead = append(dead, "amounts_dead")
	s := mustOpen(t, cat, ident, sink.WithDeadLetter(dead))
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "b", "c", "d"}, nil)
	b.Field(1).(*array.Decimal128Builder).AppendValues([]decimal128.Num{
		decimal128.FromI64(125), decimal128.FromI64(-99999999999), decimal128.FromI64(5), decimal128.FromI64(999999999)}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	sp := sink.SourcePartition{Source: "t", Partition: 0}
	offsets := []int64{1, 2, 3, 4}

	err := s.Write(ctx, sp, offsets, rec)
	var bad *sink.RowError
	if !errors.As(err, &bad) || bad.Row != 1 || !errors.Is(err, sink.ErrBadRow) || !errors.Is(err, schema.ErrIncompatibleType) {
		t.Fatalf("Write = %v, want a RowError at row 1 wrapping schema.ErrIncompatibleType", err)
	}
	// Nothing was kept: the rows before it, the bad one to the dead letter,
	// the rows after it.
	head, tail := rec.NewSlice(0, 1), rec.NewSlice(2, 4)
	defer head.Release()
	defer tail.Release()
	if err := s.Write(ctx, sp, offsets[:1], head); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, sp, 2, []byte("b"), bad.Err.Error()); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, sp, offsets[2:], tail); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, cat, ident); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("ids = %v, want [a c d]", got)
	}
}
