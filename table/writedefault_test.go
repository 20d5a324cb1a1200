package table_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// tiersByDay reads the table and counts the rows of each (event_date,
// tier) pair, as "2026-07-14 std: 3".
func tiersByDay(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) []string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	_, batches, err := tbl.Scan().ToArrowRecords(context.Background())
	require.NoError(t, err)
	counts := make(map[string]int)
	for rec, err := range batches {
		require.NoError(t, err)
		day := rec.Column(rec.Schema().FieldIndices("event_date")[0]).(*array.Date32)
		tier := rec.Column(rec.Schema().FieldIndices("tier")[0]).(*array.String)
		for i := range int(rec.NumRows()) {
			v := "NULL"
			if tier.IsValid(i) {
				v = tier.Value(i)
			}
			counts[fmt.Sprintf("%s %s", day.Value(i).FormattedString(), v)]++
		}
		rec.Release()
	}
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(out)
	return out
}

// TestWritesFillWriteDefault: on a format-v3 table, after AddColumn with
// an InitialDefault (which sets the initial-default and the
// write-default), every write whose input lacks the column writes its
// write-default, as the spec asks ("The write default for a field must be
// written if a field is not supplied to a write"); rows written before
// the column existed keep reading the initial-default.
func TestWritesFillWriteDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	writes := map[string]func(w *table.Writer, rows array.RecordReader) error{
		"ReplacePartition": func(w *table.Writer, rows array.RecordReader) error {
			_, err := w.ReplacePartition(ctx, dayKey(t, w, day1), rows)
			return err
		},
		"ReplacePartitions": func(w *table.Writer, rows array.RecordReader) error {
			_, err := w.ReplacePartitions(ctx, rows)
			return err
		},
		"ReplaceWindow": func(w *table.Writer, rows array.RecordReader) error {
			_, err := w.ReplaceWindow(ctx, []partition.Key{dayKey(t, w, day1)}, table.DropLate, rows)
			return err
		},
		"Upsert": func(w *table.Writer, rows array.RecordReader) error {
			_, err := w.Upsert(ctx, rows, "order_id")
			return err
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "orders_v3", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "3"})
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 3)
			require.NoError(t, w.AddColumn(ctx, table.NewColumn{Name: "tier", Type: iceberg.PrimitiveTypes.String, InitialDefault: iceberg.NewLiteral("std")}))

			rows := reader(orderdata.Day(day1, 4))
			defer rows.Release()
			require.NoError(t, write(w, rows))
			assert.Equal(t, []string{
				day0.Format(time.DateOnly) + " std: 3",
				day1.Format(time.DateOnly) + " std: 4",
			}, tiersByDay(t, cat, ident))
		})
	}
}
