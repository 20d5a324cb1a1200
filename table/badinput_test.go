package table_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

func TestReplacePartitionBadInput(t *testing.T) {
	t.Parallel()
	fields := orderdata.ArrowSchema().Fields()
	withoutAmount := append(append([]arrow.Field{}, fields[:2]...), fields[3:]...)
	stringAmount := append([]arrow.Field{}, fields...)
	stringAmount[2] = arrow.Field{Name: "amount_minor", Type: arrow.BinaryTypes.String}
	nullableAmount := append([]arrow.Field{}, fields...)
	nullableAmount[2].Nullable = true

	fillOrders := func(b *array.RecordBuilder, skip int, amount func(b array.Builder, i int)) {
		orders := orderdata.Day(day0, 3)
		col := 0
		for c := range fields {
			if c == skip {
				continue
			}
			for i, o := range orders {
				switch c {
				case 0:
					b.Field(col).(*array.Int64Builder).Append(o.ID)
				case 1:
					b.Field(col).(*array.Int64Builder).Append(o.Customer)
				case 2:
					amount(b.Field(col), i)
				case 3:
					b.Field(col).(*array.StringBuilder).Append(o.Currency)
				case 4:
					b.Field(col).(*array.TimestampBuilder).Append(arrow.Timestamp(o.EventTime.UnixMicro()))
				case 5:
					b.Field(col).(*array.Date32Builder).Append(arrow.Date32FromTime(o.EventTime))
				}
			}
			col++
		}
	}

	cases := []struct {
		name string
		rows func() array.RecordReader
		want error
	}{
		{"rows outside the key", func() array.RecordReader {
			return reader(append(orderdata.Day(day0, 5), orderdata.Day(day0.AddDate(0, 0, 1), 1)...))
		}, partition.ErrRowOutside},
		{"missing required column", func() array.RecordReader {
			return catalogtest.Reader(withoutAmount, 1, func(b *array.RecordBuilder, _ int) { fillOrders(b, 2, nil) })
		}, schema.ErrMissingRequired},
		{"null in a required column", func() array.RecordReader {
			return catalogtest.Reader(nullableAmount, 1, func(b *array.RecordBuilder, _ int) {
				fillOrders(b, -1, func(b array.Builder, i int) {
					if i == 1 {
						b.AppendNull()
					} else {
						b.(*array.Int64Builder).Append(7)
					}
				})
			})
		}, schema.ErrMissingRequired},
		{"string where a long is expected", func() array.RecordReader {
			return catalogtest.Reader(stringAmount, 1, func(b *array.RecordBuilder, _ int) {
				fillOrders(b, -1, func(b array.Builder, i int) { b.(*array.StringBuilder).Append("12") })
			})
		}, schema.ErrIncompatibleType},
		{"reader failing mid-stream", func() array.RecordReader {
			return &catalogtest.FailingReader{RecordReader: reader(orderdata.Day(day0, 300)), Failure: errors.New("disk on fire")}
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, ident, dir := ordersTable(t)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 40)
			scan, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)

			rows := tc.rows()
			defer rows.Release()
			_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
			require.Error(t, err)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
			}
			assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident), "table changed")
			assert.Equal(t, files, catalogtest.DataFiles(t, dir), "orphan files left behind")
			assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
		})
	}
}

func TestReplacePartitionRowOutsideNamesValue(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	rows := reader(append(orderdata.Day(day0, 5), orderdata.Day(day0.AddDate(0, 0, 1), 1)...))
	defer rows.Release()
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
	require.ErrorIs(t, err, partition.ErrRowOutside)
	assert.Contains(t, err.Error(), "2026-07-15")
}

func TestReplacePartitionNilReader(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), nil)
	assert.ErrorIs(t, err, table.ErrNilInput)
	_, err = w.ReplacePartitions(context.Background(), nil)
	assert.ErrorIs(t, err, table.ErrNilInput)
}

func TestReplacePartitionZeroKey(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	_, err := w.ReplacePartition(context.Background(), partition.Key{}, reader(nil))
	assert.ErrorIs(t, err, partition.ErrMalformedKey)
}

// cancelReader cancels its context after n batches.
type cancelReader struct {
	array.RecordReader
	n      int
	cancel context.CancelFunc
}

func (r *cancelReader) Next() bool {
	if r.n == 0 {
		r.cancel()
	}
	r.n--
	return r.RecordReader.Next()
}

func TestReplacePartitionCancelledMidWrite(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 40)
	scan, files := catalogtest.CanonicalScan(t, cat, ident), catalogtest.DataFiles(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows := &cancelReader{RecordReader: orderdata.Reader(orderdata.Day(day0, 20000), 500), n: 20, cancel: cancel}
	defer rows.Release()
	_, err := w.ReplacePartition(ctx, dayKey(t, w, day0), rows)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, scan, catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "staged files must be removed")
}

// dropReader drops the table when the input is exhausted: between the
// writing of the data files and the commit.
type dropReader struct {
	array.RecordReader
	drop func()
}

func (r *dropReader) Next() bool {
	ok := r.RecordReader.Next()
	if !ok && r.drop != nil {
		r.drop()
		r.drop = nil
	}
	return ok
}

func TestReplacePartitionTableDroppedBeforeCommit(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 40)
	files := catalogtest.DataFiles(t, dir)
	rows := &dropReader{RecordReader: reader(orderdata.Day(day0, 100)), drop: func() {
		require.NoError(t, cat.DropTable(context.Background(), ident))
	}}
	defer rows.Release()
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
	require.ErrorIs(t, err, commit.ErrTableChanged)
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "staged files must be removed")
}

func TestReplacePartitionKeyOfOtherSpec(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	old := dayKey(t, w, day0)
	evolveToMonth(t, cat, ident)
	_, err := w.ReplacePartition(context.Background(), old, reader(orderdata.Day(day0, 3)))
	assert.ErrorIs(t, err, partition.ErrWrongSpec)
}

// TestWritesRefuseOtherFileFormats: iceberg-go v0.7.0 writes Parquet
// only; every write of a table whose write.format.default is another
// format fails with commit.ErrUnsupported before writing a file.
func TestWritesRefuseOtherFileFormats(t *testing.T) {
	t.Parallel()
	writes := map[string]func(w *table.Writer) error{
		"ReplacePartition": func(w *table.Writer) error {
			_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 10)))
			return err
		},
		"ReplacePartitions": func(w *table.Writer) error {
			_, err := w.ReplacePartitions(context.Background(), reader(orderdata.Day(day0, 10)))
			return err
		},
		"ReplaceWindow": func(w *table.Writer) error {
			_, err := w.ReplaceWindow(context.Background(), window(t, w, day0, 2), table.DropLate, reader(orderdata.Day(day0, 10)))
			return err
		},
		"Upsert": func(w *table.Writer) error {
			_, err := w.Upsert(context.Background(), reader(orderdata.Day(day0, 10)), "order_id")
			return err
		},
	}
	for name, write := range writes {
		for _, format := range []string{"orc", "avro"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				cat, ident, dir := ordersTable(t)
				replaceDay(t, open(t, cat, ident), day0, 40)
				tbl, err := cat.LoadTable(context.Background(), ident)
				require.NoError(t, err)
				txn := tbl.NewTransaction()
				require.NoError(t, txn.SetProperties(iceberg.Properties{icetable.WriteFormatDefaultKey: format}))
				_, err = txn.Commit(context.Background())
				require.NoError(t, err)
				files := catalogtest.DataFiles(t, dir)

				err = write(open(t, cat, ident))
				require.ErrorIs(t, err, commit.ErrUnsupported)
				assert.Contains(t, err.Error(), format)
				assert.Equal(t, files, catalogtest.DataFiles(t, dir), "data files written")
			})
		}
	}
}

// TestWritesRefuseLongFolderNames: a partition value that would make a
// folder name over table.MaxPathSegment bytes fails with
// table.ErrUnsafePartitionValue before any file is written, in every
// write.
func TestWritesRefuseLongFolderNames(t *testing.T) {
	t.Parallel()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "label", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "label", Transform: iceberg.IdentityTransform{}})
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "label", Type: arrow.BinaryTypes.String, Nullable: true}}
	long := strings.Repeat("k", table.MaxPathSegment-len("label=")+1)
	rows := func() array.RecordReader {
		return catalogtest.Reader(fields, 2, func(b *array.RecordBuilder, i int) {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.StringBuilder).Append([]string{"a", long}[i])
		})
	}
	writes := map[string]func(w *table.Writer) error{
		"Upsert": func(w *table.Writer) error {
			_, err := w.Upsert(context.Background(), rows(), "id")
			return err
		},
		"ReplaceWindow": func(w *table.Writer) error {
			_, err := w.ReplaceWindow(context.Background(), []partition.Key{key(t, w, "label=a"), key(t, w, "label="+long)}, table.DropLate, rows())
			return err
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			cat, dir := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "labels", sch, spec, nil)
			err := write(open(t, cat, ident))
			require.ErrorIs(t, err, table.ErrUnsafePartitionValue)
			assert.Empty(t, catalogtest.DataFiles(t, dir), "data files written")
		})
	}
}
