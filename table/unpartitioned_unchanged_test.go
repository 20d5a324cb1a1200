package table_test

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// bucketSpec partitions fact_orders by bucket(4, order_id).
var bucketSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "order_id_bucket", Transform: iceberg.BucketTransform{NumBuckets: 4}})

// TestRerunIsUnchangedOnEveryLayout: on an unpartitioned table as on a
// partitioned one, every write path is Unchanged (no new snapshot) when
// it is run again on the same input, and changes the table when the
// input differs.
func TestRerunIsUnchangedOnEveryLayout(t *testing.T) {
	t.Parallel()
	specs := []struct {
		name string
		spec iceberg.PartitionSpec
	}{
		{"unpartitioned", *iceberg.UnpartitionedSpec},
		{"bucket", bucketSpec},
	}
	// A path writes input a (or b, when other) into a fresh table.
	type path struct {
		name  string
		mor   bool // a merge-on-read upsert: a change writes delete files
		props iceberg.Properties
		opts  []table.Option
		write func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer, other bool) commit.Result
	}
	a := orderdata.Day(day0, 40)
	b := changedOrders(30, 50, 9_000)
	input := func(other bool) []orderdata.Order {
		if other {
			return b
		}
		return a
	}
	upsertPath := func(name string, props iceberg.Properties, opts ...table.Option) path {
		return path{name: name, mor: props != nil, props: props, opts: opts, write: func(t *testing.T, _ catalog.Catalog, _ icetable.Identifier, w *table.Writer, other bool) commit.Result {
			return upsert(t, w, input(other))
		}}
	}
	mor := iceberg.Properties{"format-version": "2", table.PropertyMergeMode: table.ModeMergeOnRead}
	paths := []path{
		{name: "ReplacePartition", write: func(t *testing.T, _ catalog.Catalog, _ icetable.Identifier, w *table.Writer, other bool) commit.Result {
			rows := reader(input(other))
			defer rows.Release()
			res, err := w.ReplacePartition(context.Background(), key(t, w, ""), rows)
			require.NoError(t, err)
			return res
		}},
		{name: "ReplacePartitions", write: func(t *testing.T, _ catalog.Catalog, _ icetable.Identifier, w *table.Writer, other bool) commit.Result {
			rows := reader(input(other))
			defer rows.Release()
			res, err := w.ReplacePartitions(context.Background(), rows)
			require.NoError(t, err)
			return res
		}},
		upsertPath("Upsert copy-on-write", nil),
		upsertPath("Upsert copy-on-write ordered", nil, table.WithUpsertOrder("event_ts")),
		upsertPath("Upsert merge-on-read", mor),
		upsertPath("Upsert merge-on-read ordered", mor, table.WithUpsertOrder("event_ts")),
		{name: "Recompute", write: func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer, other bool) commit.Result {
			return recomputeInto(t, cat, ident, w, input(other))
		}},
	}
	for _, sp := range specs {
		for _, p := range paths {
			if p.name == "ReplacePartition" || p.name == "Recompute" {
				if sp.name != "unpartitioned" {
					continue // one key, the whole table: only without partitions
				}
			}
			t.Run(sp.name+"/"+p.name, func(t *testing.T) {
				cat, _ := catalogtest.New(t)
				ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, sp.spec, p.props)
				w := open(t, cat, ident, p.opts...)
				run := func(other bool) (commit.Result, int) {
					res := p.write(t, cat, ident, w, other)
					return res, catalogtest.Snapshots(t, cat, ident)
				}
				res, snaps := run(false)
				require.False(t, res.Unchanged, "first write")
				steps := []struct {
					other, unchanged bool
				}{{false, true}, {true, false}, {true, true}, {false, false}, {false, true}}
				if testing.Short() { // the same input again, another input, that one again
					steps = steps[:3]
				}
				for i, step := range steps {
					res, now := run(step.other)
					assert.Equal(t, step.unchanged, res.Unchanged, "step %d (input b: %v): Unchanged", i, step.other)
					if step.unchanged {
						assert.Equal(t, snaps, now, "step %d: an Unchanged write must not make a snapshot", i)
					} else {
						assert.Equal(t, snaps+1, now, "step %d: a changed write makes one snapshot", i)
					}
					snaps = now
				}
				if p.mor {
					assert.NotEqual(t, "0", summary(t, cat, ident).Properties["total-delete-files"], "a merge-on-read upsert leaves delete files")
				}
			})
		}
	}
}

// recomputeInto recomputes the whole of dst, an order table, from a source
// order table that holds orders: the aggregate gives the source's rows.
func recomputeInto(t *testing.T, cat catalog.Catalog, dst icetable.Identifier, w *table.Writer, orders []orderdata.Order) commit.Result {
	t.Helper()
	ctx := context.Background()
	src := icetable.Identifier{catalogtest.Namespace, "source_orders"}
	if _, err := cat.LoadTable(ctx, src); err != nil {
		src = catalogtest.CreateTable(t, cat, "source_orders", orderdata.Schema, *iceberg.UnpartitionedSpec, nil)
	}
	sw := open(t, cat, src)
	rows := reader(orders)
	_, err := sw.ReplacePartitions(ctx, rows)
	rows.Release()
	require.NoError(t, err)
	srcTbl, err := cat.LoadTable(ctx, src)
	require.NoError(t, err)
	res, err := w.Recompute(ctx, key(t, w, ""), table.Source{Table: srcTbl}, func(_ context.Context, src array.RecordReader) (array.RecordReader, error) {
		src.Retain()
		return src, nil
	})
	require.NoError(t, err)
	return res
}

// TestUnpartitionedLineage: the writes of an unpartitioned table are
// recorded under its one key, "": History lists them, also after their
// snapshots are expired into the lineage checkpoint, and a rerun is
// Unchanged after the expiry.
func TestUnpartitionedLineage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, *iceberg.UnpartitionedSpec, nil)
	w := open(t, cat, ident, table.WithCodeVersion("v1"))
	var ids []int64
	for _, in := range [][]orderdata.Order{orderdata.Day(day0, 20), orderdata.Day(day0, 30)} {
		rows := reader(in)
		res, err := w.ReplacePartitions(ctx, rows)
		rows.Release()
		require.NoError(t, err)
		ids = append([]int64{res.SnapshotID}, ids...)
	}
	writes := func() []int64 {
		var out []int64
		for _, h := range table.History(w.Table(), "") {
			out = append(out, h.SnapshotID)
		}
		return out
	}
	assert.Equal(t, ids, writes(), "History(unpartitioned table, \"\")")
	require.NoError(t, backfill.Expire(ctx, w, 1, 0))
	require.Nil(t, w.Table().Metadata().SnapshotByID(ids[1]), "the first write's snapshot is expired")
	assert.Equal(t, ids, writes(), "History after the expiry (the first write from the lineage checkpoint)")
	rows := reader(orderdata.Day(day0, 30))
	defer rows.Release()
	res, err := w.ReplacePartitions(ctx, rows)
	require.NoError(t, err)
	assert.True(t, res.Unchanged, "the last input again, after the expiry")
}

// TestPublishUnpartitionedBranch: a branch of an unpartitioned table
// publishes its write (the lineage names it under the key ""), and a
// publish again is a no-op.
func TestPublishUnpartitionedBranch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, *iceberg.UnpartitionedSpec, nil)
	w := open(t, cat, ident)
	rows := reader(orderdata.Day(day0, 20))
	_, err := w.ReplacePartitions(ctx, rows)
	rows.Release()
	require.NoError(t, err)
	bw := open(t, cat, ident, table.WithBranch("audit"))
	rows = reader(orderdata.Day(day0, 5))
	_, err = bw.ReplacePartitions(ctx, rows)
	rows.Release()
	require.NoError(t, err)

	res, err := w.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.False(t, res.Unchanged, "Publish of a branch that replaced the table")
	assert.Equal(t, []string{""}, res.Partitions)
	assert.Len(t, orderIDs(t, cat, ident), 5, "main's rows after the publish, want the branch's")
	again, err := w.Publish(ctx, "audit")
	require.NoError(t, err)
	assert.True(t, again.Unchanged, "publishing again is a no-op")
}
