package table_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
)

// TestFixedPartitionRefused: iceberg-go v0.7.0 writes fixed partition
// values into manifests that Java Iceberg cannot decode, so a table
// partitioned by identity of a fixed column is refused before anything is
// written, rather than committed in a form Spark cannot read.
func TestFixedPartitionRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "fx", Type: iceberg.FixedTypeOf(4)},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "fx", Transform: iceberg.IdentityTransform{}})
	ident := catalogtest.CreateTable(t, cat, "fixed", sch, spec, nil)
	w := open(t, cat, ident)

	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "fx", Type: &arrow.FixedSizeBinaryType{ByteWidth: 4}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.FixedSizeBinaryBuilder).Append([]byte("abcd"))
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()

	_, err = w.ReplacePartitions(ctx, rdr)
	require.ErrorIs(t, err, commit.ErrUnsupported)
	assert.Empty(t, catalogtest.DataFiles(t, dir), "nothing may be written")
}
