package table_test

import (
	"context"
	"slices"
	"strconv"
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
	"github.com/icerun/icerun/table"
)

// The tests of this file publish a branch by re-planning its writes on a
// main that moved: across a partition spec change, and with another
// engine's row-level deletes on the branch.

// TestPublishAfterSameNameSpecChange: the table is partitioned by
// (event_date, b = bucket[4](order_id)); the branch replaces day0's
// buckets; main moves; main's spec becomes b = bucket[8](order_id). The
// branch's keys ("b=3") name other rows under the new spec: the publish
// is refused, forced or not, and main keeps its rows.
func TestPublishAfterSameNameSpecChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	spec := iceberg.NewPartitionSpec(
		iceberg.PartitionField{SourceIDs: []int{6}, FieldID: 1000, Name: "event_date", Transform: iceberg.IdentityTransform{}},
		iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1001, Name: "b", Transform: iceberg.BucketTransform{NumBuckets: 4}},
	)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, spec, nil)
	mw := open(t, cat, ident)
	_, err := mw.ReplacePartitions(ctx, reader(orderdata.Day(day0, 40)))
	require.NoError(t, err)
	branch := orderdata.Day(day0, 40)[:10]
	for i := range branch {
		branch[i].Amount = 777_777
	}
	_, err = open(t, cat, ident, table.WithBranch("audit")).ReplacePartitions(ctx, reader(branch))
	require.NoError(t, err)
	replaceDayBuckets(t, mw, 1, 20) // main moves: the publish re-plans

	for _, step := range []func(*icetable.Transaction) error{
		func(txn *icetable.Transaction) error { return txn.UpdateSpec(true).RemoveField("b").Commit() },
		func(txn *icetable.Transaction) error {
			return txn.UpdateSpec(true).AddField("order_id", iceberg.BucketTransform{NumBuckets: 8}, "b").Commit()
		},
	} {
		tbl, err := cat.LoadTable(ctx, ident)
		require.NoError(t, err)
		txn := tbl.NewTransaction()
		require.NoError(t, step(txn))
		_, err = txn.Commit(ctx)
		require.NoError(t, err)
	}
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)
	require.Equal(t, 40, dayRows(scan, "2026-07-14"))

	for _, opts := range [][]table.Option{nil, {table.WithForce()}} {
		_, err := open(t, cat, ident, opts...).Publish(ctx, "audit")
		require.ErrorIs(t, err, commit.ErrBranchSpecChanged, "options %d", len(opts))
		after, _ := refs(t, cat, ident, "audit")
		assert.Equal(t, mainID, after, "main did not move")
		assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)), "main keeps its rows")
	}

	// Cut again and written under the current spec, the branch's day0 is
	// published: main's old-spec files of day0 are rewritten.
	require.NoError(t, mw.DropBranch(ctx, "audit"))
	_, err = open(t, cat, ident, table.WithBranch("audit")).ReplacePartitions(ctx, reader(branch))
	require.NoError(t, err)
	replaceDayBuckets(t, mw, 2, 5) // main moves again: re-planned
	_, err = mw.Publish(ctx, "audit")
	require.NoError(t, err)
	got := catalogtest.CanonicalScan(t, cat, ident)
	assert.Equal(t, 10, strings.Count(string(got), "777777"), "the branch's rows are on main")
	assert.Equal(t, onDay(branchScan(t, cat, ident, "audit"), "2026-07-14"), onDay(got, "2026-07-14"), "main's day0 is the branch's")
}

// replaceDayBuckets replaces the buckets of day0+d with n orders.
func replaceDayBuckets(t *testing.T, w *table.Writer, d, n int) {
	t.Helper()
	_, err := w.ReplacePartitions(context.Background(), reader(orderdata.Day(day0.AddDate(0, 0, d), n)))
	require.NoError(t, err)
}

// TestPublishCarriesBranchRowDeletes: another engine deletes rows of the
// branch's day0 with merge-on-read (position deletes on v2, deletion
// vectors on v3); main moves; the publish re-plans and carries the delete
// files with the data files: main's day0 holds the branch's rows less the
// deleted ones.
func TestPublishCarriesBranchRowDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day1 := day0.AddDate(0, 0, 1)
	for _, v := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			props := iceberg.Properties{
				icetable.PropertyFormatVersion: strconv.Itoa(v),
				icetable.WriteDeleteModeKey:    icetable.WriteModeMergeOnRead,
			}
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, props)
			mw := open(t, cat, ident)
			replaceDay(t, mw, day0, 40)
			replaceDay(t, open(t, cat, ident, table.WithBranch("audit")), day0, 12)
			onBranch := orderdata.Day(day0, 12)
			gone := []int64{onBranch[0].ID, onBranch[5].ID, onBranch[11].ID}
			tbl, err := cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			txn := tbl.NewTransactionOnBranch("audit")
			require.NoError(t, txn.Delete(ctx, iceberg.IsIn(iceberg.Reference("order_id"), gone...), nil))
			_, err = txn.Commit(ctx)
			require.NoError(t, err)
			replaceDay(t, mw, day1, 20) // main moves: the publish re-plans

			res, err := mw.Publish(ctx, "audit")
			require.NoError(t, err)
			assert.Equal(t, int64(9), res.AddedRows, "the branch's rows less the deleted ones")

			refCat, _ := catalogtest.New(t)
			refIdent := catalogtest.CreateTable(t, refCat, "fact_orders", orderdata.Schema, orderdata.Spec, props)
			rw := open(t, refCat, refIdent)
			kept := slices.DeleteFunc(slices.Clone(onBranch), func(o orderdata.Order) bool { return slices.Contains(gone, o.ID) })
			_, err = rw.ReplacePartition(ctx, dayKey(t, rw, day0), reader(kept))
			require.NoError(t, err)
			replaceDay(t, rw, day1, 20)
			assert.Equal(t, string(catalogtest.CanonicalScan(t, refCat, refIdent)), string(catalogtest.CanonicalScan(t, cat, ident)))
			tbl, err = cat.LoadTable(ctx, ident)
			require.NoError(t, err)
			props = tbl.CurrentSnapshot().Summary.Properties
			assert.Equal(t, "audit", props[commit.SummaryPublishedBranch])
			assert.NotEmpty(t, props["added-delete-files"], "the delete file is carried: %v", props)
		})
	}
}

// onDay are the rows of a canonical scan on the UTC day date.
func onDay(scan []byte, date string) []string {
	var out []string
	for _, line := range strings.Split(string(scan), "\n") {
		if strings.Contains(line, date) {
			out = append(out, line)
		}
	}
	return out
}

// TestPublishRefusesBranchEqualityDeletes: equality deletes apply only to
// data files of a lower sequence number, and the files a re-planned
// publish carries all take its own: carried, they would bring their rows
// back. The publish is refused, typed, and main stays as it was.
func TestPublishRefusesBranchEqualityDeletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{icetable.PropertyFormatVersion: "2"})
	mw := open(t, cat, ident)
	replaceDay(t, mw, day0, 40)
	replaceDay(t, open(t, cat, ident, table.WithBranch("audit")), day0, 12)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	txn := tbl.NewTransactionOnBranch("audit")
	rows := orderdata.Reader(orderdata.Day(day0, 12)[:2], 64)
	defer rows.Release()
	sc := arrow.NewSchema([]arrow.Field{rows.Schema().Field(0), rows.Schema().Field(5)}, nil)
	recs := func(yield func(arrow.RecordBatch, error) bool) {
		for rows.Next() {
			rec := rows.RecordBatch()
			if !yield(array.NewRecordBatch(sc, []arrow.Array{rec.Column(0), rec.Column(5)}, rec.NumRows()), nil) {
				return
			}
		}
	}
	files, err := txn.WriteEqualityDeletes(ctx, []int{1, 6}, recs)
	require.NoError(t, err)
	require.NoError(t, txn.NewRowDelta(nil).AddDeletes(files...).Commit(ctx))
	_, err = txn.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, 10, dayRows(branchScan(t, cat, ident, "audit"), "2026-07-14"), "the branch's day0 less 2 rows")
	replaceDay(t, mw, day0.AddDate(0, 0, 1), 20) // main moves: the publish re-plans
	mainID, _ := refs(t, cat, ident, "audit")
	scan := catalogtest.CanonicalScan(t, cat, ident)

	_, err = mw.Publish(ctx, "audit")
	require.ErrorIs(t, err, commit.ErrUnsupported)
	assert.Contains(t, err.Error(), "equality delete")
	after, _ := refs(t, cat, ident, "audit")
	assert.Equal(t, mainID, after, "main did not move")
	assert.Equal(t, string(scan), string(catalogtest.CanonicalScan(t, cat, ident)))
}
