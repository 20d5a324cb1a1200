package table_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

func TestReplacePartitionsOnlyTouchesProducedPartitions(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	for d := 0; d < 4; d++ {
		replaceDay(t, w, day0.AddDate(0, 0, d), 10)
	}
	// New content for days 1 and 2 only.
	in := append(tagged(day0.AddDate(0, 0, 1), 7, 5), tagged(day0.AddDate(0, 0, 2), 7, 6)...)
	res, err := w.ReplacePartitions(context.Background(), reader(in))
	require.NoError(t, err)
	assert.Equal(t, []string{"event_date=2026-07-15", "event_date=2026-07-16"}, res.Partitions)
	assert.Equal(t, int64(11), res.AddedRows)
	assert.Equal(t, int64(20), res.DeletedRows)
	got := tagsByDay(t, cat, ident)
	assert.Len(t, got, 4, "no partition may be truncated")
	assert.Equal(t, map[string]int{"7": 5}, got["2026-07-15"])
	assert.Equal(t, map[string]int{"7": 6}, got["2026-07-16"])
	assert.Len(t, got["2026-07-14"], 10)
	assert.Len(t, got["2026-07-17"], 10)

	again, err := w.ReplacePartitions(context.Background(), reader(in))
	require.NoError(t, err)
	assert.True(t, again.Unchanged)
	assert.Equal(t, res.SnapshotID, again.SnapshotID)
}

func TestReplacePartitionsEmptyInputIsNoOp(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 10)
	before := catalogtest.CanonicalScan(t, cat, ident)
	res, err := w.ReplacePartitions(context.Background(), reader(nil))
	require.NoError(t, err)
	assert.True(t, res.Unchanged)
	assert.Equal(t, before, catalogtest.CanonicalScan(t, cat, ident))
	assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
}

// Every transform routes rows to the right partition, and replacing the
// produced partitions leaves the others alone.
func TestReplacePartitionsEveryTransform(t *testing.T) {
	t.Parallel()
	specs := map[string]iceberg.PartitionField{
		"identity long":   {SourceIDs: []int{2}, FieldID: 1000, Name: "customer", Transform: iceberg.IdentityTransform{}},
		"identity string": {SourceIDs: []int{4}, FieldID: 1000, Name: "currency", Transform: iceberg.IdentityTransform{}},
		"year":            {SourceIDs: []int{5}, FieldID: 1000, Name: "y", Transform: iceberg.YearTransform{}},
		"month":           {SourceIDs: []int{5}, FieldID: 1000, Name: "m", Transform: iceberg.MonthTransform{}},
		"day":             {SourceIDs: []int{5}, FieldID: 1000, Name: "d", Transform: iceberg.DayTransform{}},
		"hour":            {SourceIDs: []int{5}, FieldID: 1000, Name: "h", Transform: iceberg.HourTransform{}},
		"bucket":          {SourceIDs: []int{1}, FieldID: 1000, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}},
		"truncate long":   {SourceIDs: []int{3}, FieldID: 1000, Name: "t", Transform: iceberg.TruncateTransform{Width: 1000}},
		"truncate string": {SourceIDs: []int{4}, FieldID: 1000, Name: "ts", Transform: iceberg.TruncateTransform{Width: 1}},
		"void":            {SourceIDs: []int{4}, FieldID: 1000, Name: "v", Transform: iceberg.VoidTransform{}},
	}
	for name, pf := range specs {
		t.Run(name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, iceberg.NewPartitionSpec(pf), nil)
			w := open(t, cat, ident)
			ctx := context.Background()
			var all []orderdata.Order
			for d := 0; d < 3; d++ {
				all = append(all, orderdata.Day(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d), 40)...)
			}
			first, err := w.ReplacePartitions(ctx, reader(all))
			require.NoError(t, err)
			want := catalogtest.CanonicalScan(t, cat, ident)
			require.Equal(t, len(all), strings.Count(string(want), "\n"))

			// Replace the partitions of a subset: rows of those partitions only
			// change; rows of every other partition stay.
			sub := append([]orderdata.Order{}, all[:10]...)
			for i := range sub { // change a column that is not the partition source
				if pf.SourceID() == 3 {
					sub[i].Customer = -1
				} else {
					sub[i].Amount = -1
				}
			}
			res, err := w.ReplacePartitions(ctx, reader(sub))
			require.NoError(t, err)
			touched := map[string]bool{}
			for _, k := range res.Partitions {
				touched[k] = true
			}
			assert.NotEmpty(t, touched)
			assert.LessOrEqual(t, len(res.Partitions), len(first.Partitions))

			// Put the original rows of the touched partitions back: the table
			// must equal the first load exactly.
			_, err = w.ReplacePartitions(ctx, reader(all))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(catalogtest.CanonicalScan(t, cat, ident)))
			last, err := w.ReplacePartitions(ctx, reader(all))
			require.NoError(t, err)
			assert.True(t, last.Unchanged, "rerun of the full input")
			_ = commit.ErrConflict
		})
	}
}
