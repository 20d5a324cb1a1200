package table_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/arrowmem"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/table"
)

// ordersFile writes orders to a Parquet file of several row groups.
func ordersFile(t *testing.T, orders []orderdata.Order) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "orders.parquet")
	f, err := os.Create(path)
	require.NoError(t, err)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(700))
	w, err := pqarrow.NewFileWriter(orderdata.ArrowSchema(), f, props, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	rdr := orderdata.Reader(orders, 500)
	defer rdr.Release()
	for rdr.Next() {
		require.NoError(t, w.WriteBuffered(rdr.RecordBatch()))
	}
	require.NoError(t, w.Close())
	return path
}

// fingerprints is what the current snapshot recorded of its input.
func fingerprints(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	return tbl.CurrentSnapshot().Summary.Properties[commit.SummaryPartitionFingerprints]
}

// TestWritesFromReusedMemoryAreExact: every write path that takes
// parquetfile's batches, whose memory is reused once they are released,
// writes the rows it read. The batches come from a poisoning allocator:
// any read of a batch after its last Release (a writer, the fingerprint,
// a sort or a key check holding a batch it did not retain) reads poison,
// and the table, or the fingerprints recorded of the input, would differ
// from those written from batches that are never reused.
func TestWritesFromReusedMemoryAreExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var days []orderdata.Order
	for d := range 3 {
		days = append(days, orderdata.Day(day0.AddDate(0, 0, d), 1500)...)
	}
	changed := changedOrders(100, 400, 7)
	steps := []struct {
		name   string
		orders []orderdata.Order
		opts   []table.Option
		write  func(w *table.Writer, rdr array.RecordReader) error
	}{
		{"dynamic", days, nil, func(w *table.Writer, rdr array.RecordReader) error {
			_, err := w.ReplacePartitions(ctx, rdr)
			return err
		}},
		{"static", orderdata.Day(day0, 2000), nil, func(w *table.Writer, rdr array.RecordReader) error {
			_, err := w.ReplacePartition(ctx, dayKey(t, w, day0), rdr)
			return err
		}},
		{"upsert", changed, nil, func(w *table.Writer, rdr array.RecordReader) error {
			_, err := w.Upsert(ctx, rdr, "order_id")
			return err
		}},
		{"merge-on-read upsert", changedOrders(300, 600, 9), []table.Option{table.WithWriteMode(table.MergeOnRead)}, func(w *table.Writer, rdr array.RecordReader) error {
			_, err := w.Upsert(ctx, rdr, "order_id")
			return err
		}},
	}
	byCustomer, err := icetable.NewSortOrder(1, []icetable.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}})
	require.NoError(t, err)
	create := func(sorted bool) (catalog.Catalog, icetable.Identifier) {
		cat, _ := catalogtest.New(t)
		ident := icetable.Identifier{catalogtest.Namespace, "fact_orders"}
		spec := orderdata.Spec
		opts := []catalog.CreateTableOpt{catalog.WithPartitionSpec(&spec)}
		if sorted {
			opts = append(opts, catalog.WithSortOrder(byCustomer))
		}
		_, err := cat.CreateTable(ctx, ident, orderdata.Schema, opts...)
		require.NoError(t, err)
		return cat, ident
	}
	for _, sorted := range []bool{false, true} {
		catA, identA := create(sorted) // from batches never reused
		catB, identB := create(sorted) // from parquetfile's, poisoned once released
		for _, s := range steps {
			t.Run(fmt.Sprintf("%s/sorted=%v", s.name, sorted), func(t *testing.T) {
				mem := orderdata.Reader(s.orders, 64)
				defer mem.Release()
				require.NoError(t, s.write(open(t, catA, identA, s.opts...), mem))
				file, err := parquetfile.Open(ctx, []string{ordersFile(t, s.orders)}, parquetfile.WithBatchRows(128),
					parquetfile.WithAllocator(arrowmem.NewPoisoning()))
				require.NoError(t, err)
				defer file.Release()
				require.NoError(t, s.write(open(t, catB, identB, s.opts...), file))
				require.Equal(t, string(catalogtest.CanonicalScan(t, catA, identA)), string(catalogtest.CanonicalScan(t, catB, identB)))
				require.Equal(t, fingerprints(t, catA, identA), fingerprints(t, catB, identB))
			})
		}
	}
}
