package table_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// dictionaryCurrency is rdr's batches with the currency column
// dictionary-encoded, as Arrow producers hand over low-cardinality
// strings (DuckDB's enums, pyarrow's categoricals).
func dictionaryCurrency(t *testing.T, rdr array.RecordReader) array.RecordReader {
	t.Helper()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	var sc *arrow.Schema
	var out []arrow.RecordBatch
	for rdr.Next() {
		rec := rdr.RecordBatch()
		b := array.NewDictionaryBuilder(memory.DefaultAllocator, dt).(*array.BinaryDictionaryBuilder)
		cur := rec.Column(3).(*array.String)
		for i := range cur.Len() {
			if cur.IsNull(i) {
				b.AppendNull()
				continue
			}
			require.NoError(t, b.AppendString(cur.Value(i)))
		}
		d := b.NewArray()
		b.Release()
		cols := append([]arrow.Array{}, rec.Columns()...)
		cols[3] = d
		fields := append([]arrow.Field{}, rec.Schema().Fields()...)
		fields[3] = arrow.Field{Name: "currency", Type: dt, Nullable: true}
		sc = arrow.NewSchema(fields, nil)
		out = append(out, array.NewRecordBatch(sc, cols, rec.NumRows()))
		d.Release()
	}
	require.NoError(t, rdr.Err())
	r, err := array.NewRecordReader(sc, out)
	require.NoError(t, err)
	for _, rec := range out {
		rec.Release()
	}
	return r
}

// TestDictionaryInputIsItsValues: a dictionary-encoded string column is
// written as its strings: the table holds what the same rows with plain
// strings make, and a rerun of those plain rows is Unchanged (one
// fingerprint for both).
func TestDictionaryInputIsItsValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := orderdata.Day(day0, 3000)
	catA, identA, _ := ordersTable(t)
	catB, identB, _ := ordersTable(t)
	plain := reader(rows)
	defer plain.Release()
	wA := open(t, catA, identA)
	_, err := wA.ReplacePartition(ctx, dayKey(t, wA, day0), plain)
	require.NoError(t, err)

	src := reader(rows)
	dict := dictionaryCurrency(t, src)
	src.Release()
	defer dict.Release()
	wB := open(t, catB, identB)
	_, err = wB.ReplacePartition(ctx, dayKey(t, wB, day0), dict)
	require.NoError(t, err)
	require.Equal(t, string(catalogtest.CanonicalScan(t, catA, identA)), string(catalogtest.CanonicalScan(t, catB, identB)))

	again := reader(rows)
	defer again.Release()
	res, err := wB.ReplacePartition(ctx, dayKey(t, wB, day0), again)
	require.NoError(t, err)
	require.True(t, res.Unchanged, "plain rerun of the dictionary-encoded write")
}
