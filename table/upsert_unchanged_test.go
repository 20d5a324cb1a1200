package table_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// TestUpsertReplayOfALargePartitionIsUnchanged: a replayed Upsert is
// Unchanged also when the partition's files, written in parallel, give
// its rows back in another order than the merge wrote them (a set
// already applied, even under another, is Unchanged too); a change set
// that changes a row is not.
func TestUpsertReplayOfALargePartitionIsUnchanged(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a large partition: not in -short")
	}
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident, table.WithParallelWrite(2, 20_000))
	replaceDay(t, w, day0, 150_000)
	require.Len(t, partitionPaths(t, cat, ident, day0), 2, "the test needs a partition of several files")
	all := orderdata.Day(day0, 150_000)
	a := append([]orderdata.Order{}, all[5000:5030]...)
	b := append(append([]orderdata.Order{}, all[100:110]...), all[140_000:140_020]...)
	for i := range a {
		a[i].Amount++
	}
	for i := range b {
		b[i].Amount += 2
	}
	c := append([]orderdata.Order{}, all[5000:5030]...) // a's keys, other rows
	for i := range c {
		c[i].Amount += 3
	}
	for run, r := range []struct {
		in        []orderdata.Order
		unchanged bool
	}{{a, false}, {a, true}, {b, false}, {b, true}, {a, true}, {c, false}, {c, true}} {
		res := upsert(t, w, r.in)
		assert.Equal(t, r.unchanged, res.Unchanged, "run %d", run)
	}
}

// TestUpsertOfADuplicatedRowIsNotUnchanged: a partition holding one row
// twice (a replace may write that) is changed by an Upsert of that row,
// which leaves it once.
func TestUpsertOfADuplicatedRowIsNotUnchanged(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	row := orderdata.Day(day0, 1)
	rows := orderdata.Reader(append(row, row...), 10)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), rows)
	rows.Release()
	require.NoError(t, err)
	res := upsert(t, w, row)
	assert.False(t, res.Unchanged, "Upsert of a row the partition holds twice")
	assert.Equal(t, map[string]int{fmt.Sprint(row[0].ID): 1}, orderIDs(t, cat, ident), "order ids after the Upsert")
	assert.True(t, upsert(t, w, row).Unchanged, "the same Upsert again")
}
