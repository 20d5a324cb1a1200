package snapshotcommit_test

import (
	"context"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// TestSnapshotSummaryJavaOperations runs each of icerun's operations and
// checks the operation and properties of its snapshot summary against
// what Java Iceberg writes for the same change: ReplacePartitions is
// Java's ReplacePartitions (always "overwrite", replace-partitions=true);
// a static replacement, a window and an upsert are Java's OverwriteFiles
// ("append", "overwrite" or "delete" by what they add and remove).
func TestSnapshotSummaryJavaOperations(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	w := openWriter(t, cat, ident)
	type want struct {
		op                               icetable.Operation
		replacePartitions                bool
		changed, created, kept, replaced string
	}
	check := func(step string, w want) {
		t.Helper()
		s := load(t, cat, ident).CurrentSnapshot()
		props := s.Summary.Properties
		assert.Equal(t, w.op, s.Summary.Operation, "%s: operation", step)
		v, ok := props["replace-partitions"]
		assert.Equal(t, w.replacePartitions, ok, "%s: replace-partitions set", step)
		if ok {
			assert.Equal(t, "true", v, "%s: replace-partitions", step)
		}
		for k, v := range map[string]string{"changed-partition-count": w.changed, "manifests-created": w.created, "manifests-kept": w.kept, "manifests-replaced": w.replaced} {
			assert.Equal(t, v, props[k], "%s: %s", step, k)
		}
	}

	replaceDays(t, w, days(10, day(0), day(1))) // first commit, new partitions only
	check("dynamic, new partitions", want{icetable.OpOverwrite, true, "2", "1", "0", "0"})
	replaceDay(t, w, day(2), orderdata.Day(day(2), 5))
	check("static, new partition", want{icetable.OpAppend, false, "1", "1", "1", "0"})
	replaceDay(t, w, day(1), repriced(orderdata.Day(day(1), 4), 7))
	check("static, replacing", want{icetable.OpOverwrite, false, "1", "2", "1", "1"})
	replaceDays(t, w, repriced(days(3, day(2)), 8))
	// The tombstones of the previous commit are dropped, not kept.
	check("dynamic, replacing", want{icetable.OpOverwrite, true, "1", "2", "1", "1"})
	replaceDay(t, w, day(0), nil)
	check("static, emptying", want{icetable.OpDelete, false, "1", "2", "1", "1"})
	up := orderdata.Reader(repriced(orderdata.Day(day(1), 2), 9), 64)
	_, err := w.Upsert(ctx, up, "order_id")
	up.Release()
	require.NoError(t, err)
	check("upsert", want{icetable.OpOverwrite, false, "1", "2", "1", "1"})

	checkSummaries(t, load(t, cat, ident))
}
