package table_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// badFieldNames are partition field names an Avro manifest cannot hold,
// two of them path traversals.
var badFieldNames = []string{"event-date", "my field", "1day", "a/b", "..", "../../escape"}

var labelSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "label", Type: iceberg.PrimitiveTypes.String},
)

func labelRows() array.RecordReader {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}}
	return catalogtest.Reader(fields, 2, func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append("x")
	})
}

// TestOpenRefusesInvalidFieldNames: Open of a table whose partition field
// name an Avro manifest cannot hold fails with
// partition.ErrInvalidFieldName.
func TestOpenRefusesInvalidFieldNames(t *testing.T) {
	t.Parallel()
	for _, name := range badFieldNames {
		t.Run(name, func(t *testing.T) {
			cat, dir := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "labels", labelSchema, partitionOf(2, name, iceberg.IdentityTransform{}), nil)
			_, err := table.Open(context.Background(), cat, ident)
			require.ErrorIs(t, err, partition.ErrInvalidFieldName)
			assert.Contains(t, err.Error(), name)
			assert.Empty(t, catalogtest.DataFiles(t, dir))
		})
	}
}

// TestWritesRefuseInvalidFieldNames: when the spec changes under an open
// writer to a field name an Avro manifest cannot hold, every write fails
// with partition.ErrInvalidFieldName before it writes a file (iceberg-go
// would write its data files, then fail untyped in the manifest writer;
// for a traversal name, outside the table location), and the table is
// left as it was.
func TestWritesRefuseInvalidFieldNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	writes := map[string]func(w *table.Writer, k partition.Key) error{
		"ReplacePartition": func(w *table.Writer, k partition.Key) error {
			rows := labelRows()
			defer rows.Release()
			_, err := w.ReplacePartition(ctx, k, rows)
			return err
		},
		"ReplacePartitions": func(w *table.Writer, _ partition.Key) error {
			rows := labelRows()
			defer rows.Release()
			_, err := w.ReplacePartitions(ctx, rows)
			return err
		},
		"Upsert": func(w *table.Writer, _ partition.Key) error {
			rows := labelRows()
			defer rows.Release()
			_, err := w.Upsert(ctx, rows, "id")
			return err
		},
		"ReplaceWindow": func(w *table.Writer, k partition.Key) error {
			rows := labelRows()
			defer rows.Release()
			_, err := w.ReplaceWindow(ctx, []partition.Key{k}, table.DropLate, rows)
			return err
		},
	}
	for _, name := range badFieldNames {
		for op, write := range writes {
			t.Run(name+"/"+op, func(t *testing.T) {
				cat, dir := catalogtest.New(t)
				ident := catalogtest.CreateTable(t, cat, "labels", labelSchema, partitionOf(2, "label", iceberg.IdentityTransform{}), nil)
				w := open(t, cat, ident)
				k := key(t, w, "label=x")
				tbl, err := cat.LoadTable(ctx, ident)
				require.NoError(t, err)
				txn := tbl.NewTransaction()
				require.NoError(t, txn.UpdateSpec(true).RenameField("label", name).Commit())
				_, err = txn.Commit(ctx)
				require.NoError(t, err)
				scan := catalogtest.CanonicalScan(t, cat, ident)

				err = write(w, k)
				require.ErrorIs(t, err, partition.ErrInvalidFieldName)
				assert.Empty(t, catalogtest.DataFiles(t, dir), "data files written")
				assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "table changed")
			})
		}
	}
}

// TestPublishRefusesInvalidFieldNames: a publish onto a main whose spec
// took a field name an Avro manifest cannot hold fails with
// partition.ErrInvalidFieldName, like every write, and main is left as it
// was.
func TestPublishRefusesInvalidFieldNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "labels", labelSchema, partitionOf(2, "label", iceberg.IdentityTransform{}), nil)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	rows := labelRows()
	_, err := bw.ReplacePartition(ctx, key(t, bw, "label=x"), rows)
	rows.Release()
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	txn := tbl.NewTransaction()
	require.NoError(t, txn.UpdateSpec(true).RenameField("label", "event-date").Commit())
	_, err = txn.Commit(ctx)
	require.NoError(t, err)
	scan := catalogtest.CanonicalScan(t, cat, ident)

	_, err = bw.Publish(ctx, "audit")
	require.ErrorIs(t, err, partition.ErrInvalidFieldName)
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "main changed")
}
