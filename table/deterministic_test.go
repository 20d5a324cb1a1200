package table_test

import (
	"context"
	"crypto/sha256"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// TestSameRowsSameFileBytes: the same rows replaced into two fresh tables
// with the same options give data files of the same bytes (named apart
// by their write UUIDs only), with two parallel writers and row groups
// small enough that each file holds several. A change of the Parquet
// library or of the encoding path must keep this.
func TestSameRowsSameFileBytes(t *testing.T) {
	t.Parallel()
	const rows = 120_000
	var want [][32]byte
	for round := range 2 {
		cat, dir := catalogtest.New(t)
		ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, map[string]string{"write.parquet.row-group-limit": "20000"})
		w, err := table.Open(context.Background(), cat, ident, table.WithParallelWrite(2, rows/2))
		require.NoError(t, err)
		key, err := w.Key("event_date=2026-07-14")
		require.NoError(t, err)
		in := orderdata.Stream(day0, rows, 8192)
		_, err = w.ReplacePartition(context.Background(), key, in)
		in.Release()
		require.NoError(t, err)
		var got [][32]byte
		for _, f := range catalogtest.DataFiles(t, dir) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			got = append(got, sha256.Sum256(b))
		}
		slices.SortFunc(got, func(a, b [32]byte) int { return slices.Compare(a[:], b[:]) })
		require.Len(t, got, 2, "round %d: one file per writer", round)
		if round == 0 {
			want = got
			continue
		}
		require.Equal(t, want, got, "the same rows gave data files of other bytes")
	}
}
