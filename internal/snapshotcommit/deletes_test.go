package snapshotcommit_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// The tests of this file replace partitions that hold row-level delete
// files, written by iceberg-go: position deletes (merge-on-read DELETE on
// format v2), deletion vectors (the same on v3) and equality deletes.

// deleteKind is how rowDelete removes rows.
type deleteKind string

const (
	positionDeletes deleteKind = "position" // iceberg-go merge-on-read delete: position deletes (v2), deletion vectors (v3)
	equalityDeletes deleteKind = "equality" // equality deletes on (order_id, event_date)
)

// rowDelete removes the rows of gone from the table with row-level delete
// files of kind, in one snapshot written by iceberg-go.
func rowDelete(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, kind deleteKind, gone []orderdata.Order) {
	t.Helper()
	ctx := context.Background()
	tbl := load(t, cat, ident)
	txn := tbl.NewTransaction()
	switch kind {
	case positionDeletes:
		ids := make([]int64, len(gone))
		for i, o := range gone {
			ids[i] = o.ID
		}
		require.NoError(t, txn.Delete(ctx, iceberg.IsIn(iceberg.Reference("order_id"), ids...), nil))
	case equalityDeletes:
		rows := orderdata.Reader(gone, 1024)
		defer rows.Release()
		sc := arrow.NewSchema([]arrow.Field{rows.Schema().Field(0), rows.Schema().Field(5)}, nil)
		recs := func(yield func(arrow.RecordBatch, error) bool) {
			for rows.Next() {
				rec := rows.RecordBatch()
				out := array.NewRecordBatch(sc, []arrow.Array{rec.Column(0), rec.Column(5)}, rec.NumRows())
				if !yield(out, nil) {
					return
				}
			}
		}
		files, err := txn.WriteEqualityDeletes(ctx, []int{1, 6}, recs)
		require.NoError(t, err)
		require.NotEmpty(t, files)
		require.NoError(t, txn.NewRowDelta(nil).AddDeletes(files...).Commit(ctx))
	}
	_, err := txn.Commit(ctx)
	require.NoError(t, err)
}

// liveDeletes are the live delete-file entries of snapshot s.
func liveDeletes(t *testing.T, tbl *icetable.Table, s *icetable.Snapshot) []iceberg.ManifestEntry {
	t.Helper()
	var out []iceberg.ManifestEntry
	for _, mf := range manifests(t, tbl, s) {
		if mf.ManifestContent() == iceberg.ManifestContentDeletes {
			out = append(out, entries(t, tbl, mf, true)...)
		}
	}
	return out
}

// deleteDays are the event dates of the partitions of live delete files.
func deleteDays(t *testing.T, tbl *icetable.Table) []string {
	t.Helper()
	var out []string
	for _, e := range liveDeletes(t, tbl, tbl.CurrentSnapshot()) {
		v := e.DataFile().Partition()[1000]
		d, ok := v.(iceberg.Date)
		require.True(t, ok, "partition value %v (%T)", v, v)
		out = append(out, day0.AddDate(0, 0, int(d)-int(day0.Unix()/86400)).Format(time.DateOnly))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// without is orders minus those of gone.
func without(orders, gone []orderdata.Order) []orderdata.Order {
	var out []orderdata.Order
	for _, o := range orders {
		if !slices.ContainsFunc(gone, func(g orderdata.Order) bool { return g.ID == o.ID }) {
			out = append(out, o)
		}
	}
	return out
}

// every3rd is every third order.
func every3rd(orders []orderdata.Order) []orderdata.Order {
	var out []orderdata.Order
	for i := 0; i < len(orders); i += 3 {
		out = append(out, orders[i])
	}
	return out
}

// checkDeleteTotals checks the delete-file totals of the current snapshot's
// summary against its live delete files.
func checkDeleteTotals(t *testing.T, tbl *icetable.Table) {
	t.Helper()
	s := tbl.CurrentSnapshot()
	var files, pos, eqs int64
	for _, e := range liveDeletes(t, tbl, s) {
		files++
		if e.DataFile().ContentType() == iceberg.EntryContentEqDeletes {
			eqs += e.DataFile().Count()
		} else {
			pos += e.DataFile().Count()
		}
	}
	for k, want := range map[string]int64{"total-delete-files": files, "total-position-deletes": pos, "total-equality-deletes": eqs} {
		assert.Equal(t, strconv.FormatInt(want, 10), s.Summary.Properties[k], "summary %s", k)
	}
}

// TestReplaceRowLevelDeletes replaces a partition that holds delete files
// of each kind, on format v2 and v3: the partition then holds exactly the
// new rows, its delete files are gone from the snapshot (tombstoned, with
// the removed-* summary counts), the delete files of the other partitions
// stay and still apply, and the summary totals match the live files.
func TestReplaceRowLevelDeletes(t *testing.T) {
	for _, tc := range []struct {
		version int
		kind    deleteKind
	}{
		{2, positionDeletes},
		{3, positionDeletes}, // deletion vectors
		{2, equalityDeletes},
		{3, equalityDeletes},
	} {
		t.Run(fmt.Sprintf("v%d/%s", tc.version, tc.kind), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", iceberg.Properties{
				icetable.PropertyFormatVersion: strconv.Itoa(tc.version),
				icetable.WriteDeleteModeKey:    icetable.WriteModeMergeOnRead,
			})
			w := openWriter(t, cat, ident)
			content := map[time.Time][]orderdata.Order{day(0): orderdata.Day(day(0), 12), day(1): orderdata.Day(day(1), 12), day(2): orderdata.Day(day(2), 12)}
			replaceDays(t, w, flatten(content))
			gone := append(every3rd(content[day(0)]), every3rd(content[day(1)])...)
			rowDelete(t, cat, ident, tc.kind, gone)
			content[day(0)], content[day(1)] = without(content[day(0)], gone), without(content[day(1)], gone)
			require.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after the delete")
			require.Equal(t, []string{"2026-07-14", "2026-07-15"}, deleteDays(t, load(t, cat, ident)), "partitions with delete files")

			content[day(0)] = repriced(orderdata.Day(day(0), 7), 5)
			res := replaceDay(t, w, day(0), content[day(0)])
			assert.Equal(t, 1, res.DeletedFiles, "DeletedFiles counts data files")
			assert.Equal(t, int64(12), res.DeletedRows, "DeletedRows: records of the removed data files")

			tbl := load(t, cat, ident)
			assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after replacing day0")
			assert.Equal(t, []string{"2026-07-15"}, deleteDays(t, tbl), "partitions with delete files: day0's are gone")
			cur := tbl.CurrentSnapshot()
			assert.Positive(t, summaryInt(t, cur, "removed-delete-files"), "removed-delete-files")
			if tc.kind == equalityDeletes {
				assert.Equal(t, int64(4), summaryInt(t, cur, "removed-equality-deletes"), "removed-equality-deletes")
			} else {
				assert.Equal(t, int64(4), summaryInt(t, cur, "removed-position-deletes"), "removed-position-deletes")
			}
			if tc.version == 3 && tc.kind == positionDeletes {
				assert.Positive(t, summaryInt(t, cur, "removed-dvs"), "removed-dvs")
			}
			checkDeleteTotals(t, tbl)
			checkSummaries(t, tbl)

			// the remaining delete files still apply after more commits
			content[day(2)] = orderdata.Day(day(2), 3)
			replaceDay(t, w, day(2), content[day(2)])
			assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after replacing day2")
			content[day(1)] = orderdata.Day(day(1), 2)
			replaceDay(t, w, day(1), content[day(1)])
			tbl = load(t, cat, ident)
			assert.Empty(t, deleteDays(t, tbl), "no delete file left")
			assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after replacing day1")
			checkDeleteTotals(t, tbl)
		})
	}
}

// TestReplaceAfterRowDeleteNotUnchanged: a rerun of the same input is
// Unchanged only while nothing touched the partition; a row-level delete
// that leaves its data files in place is such a touch, and the rerun
// restores the deleted rows.
func TestReplaceAfterRowDeleteNotUnchanged(t *testing.T) {
	for _, kind := range []deleteKind{positionDeletes, equalityDeletes} {
		t.Run(string(kind), func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", iceberg.Properties{icetable.PropertyFormatVersion: "2", icetable.WriteDeleteModeKey: icetable.WriteModeMergeOnRead})
			w := openWriter(t, cat, ident)
			orders := orderdata.Day(day(0), 9)
			replaceDay(t, w, day(0), orders)
			require.True(t, replaceDay(t, w, day(0), orders).Unchanged, "rerun before the delete")
			rowDelete(t, cat, ident, kind, every3rd(orders))
			res := replaceDay(t, w, day(0), orders)
			assert.False(t, res.Unchanged, "rerun after a row-level delete")
			assert.Equal(t, string(expected(t, cat, orders)), string(catalogtest.CanonicalScan(t, cat, ident)), "rerun restores the rows")
			assert.True(t, replaceDay(t, w, day(0), orders).Unchanged, "rerun after the restore")
		})
	}
}

// TestUpsertRecomputeApplyDeletes: Upsert merges into the rows a partition
// holds after its delete files (a deleted row stays deleted unless the
// input brings it back), and Recompute aggregates a source partition with
// its deletes applied.
func TestUpsertRecomputeApplyDeletes(t *testing.T) {
	for _, tc := range []struct {
		version int
		kind    deleteKind
	}{{2, positionDeletes}, {3, positionDeletes}, {2, equalityDeletes}} {
		t.Run(fmt.Sprintf("v%d/%s", tc.version, tc.kind), func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			props := iceberg.Properties{icetable.PropertyFormatVersion: strconv.Itoa(tc.version), icetable.WriteDeleteModeKey: icetable.WriteModeMergeOnRead}
			ident := ordersTable(t, cat, "orders", props)
			w := openWriter(t, cat, ident)
			orders := orderdata.Day(day(0), 9)
			replaceDay(t, w, day(0), orders)
			rowDelete(t, cat, ident, tc.kind, orders[:3]) // rows 0, 1, 2
			// upsert: row 1 comes back, row 4 is repriced, a new row 9
			in := []orderdata.Order{orders[1], repriced(orders[4:5], 77)[0], orderdata.At(day(0), 9, 10)}
			up := orderdata.Reader(in, 64)
			res, err := w.Upsert(ctx, up, "order_id")
			up.Release()
			require.NoError(t, err)
			assert.False(t, res.Unchanged)
			want := append(slices.Clone(orders[3:]), orders[1], orderdata.At(day(0), 9, 10))
			want[1] = in[1]
			assert.Equal(t, string(expected(t, cat, want)), string(catalogtest.CanonicalScan(t, cat, ident)), "after the upsert")
			assert.Empty(t, deleteDays(t, load(t, cat, ident)), "the partition's delete files are gone")

			// Recompute: count the rows of the source partition into a one-row aggregate
			rowDelete(t, cat, ident, tc.kind, want[:2])
			agg := catalogtest.CreateTable(t, cat, "daily", orderdata.Schema, orderdata.Spec, props)
			aw := openWriter(t, cat, agg)
			src := load(t, cat, ident)
			_, err = aw.Recompute(ctx, dayKey(t, aw, day(0)), table.Source{Table: src, Key: dayKey(t, w, day(0))}, func(ctx context.Context, rows array.RecordReader) (array.RecordReader, error) {
				var n int64
				for rows.Next() {
					n += rows.RecordBatch().NumRows()
				}
				if err := rows.Err(); err != nil {
					return nil, err
				}
				return orderdata.Reader([]orderdata.Order{{ID: n, EventTime: day(0)}}, 1), nil
			})
			require.NoError(t, err)
			got := string(catalogtest.CanonicalScan(t, cat, agg))
			assert.Equal(t, string(expected(t, cat, []orderdata.Order{{ID: int64(len(want) - 2), EventTime: day(0)}})), got, "recomputed count")
		})
	}
}

// TestReplaceGlobalEqualityDeletes: equality deletes of an unpartitioned
// spec apply to every data file of a lower sequence number. After the
// spec evolves, replacing a partition reads the older-spec files with the
// deletes applied (the rows kept from them stay deleted), keeps the global
// delete file while an older data file it applies to is live (dropping it
// would bring back deleted rows), and drops it once every live data file
// is newer (Java's dropDeleteFilesOlderThan). While it lives, a rerun is
// never Unchanged.
func TestReplaceGlobalEqualityDeletes(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", orderdata.Schema, *iceberg.UnpartitionedSpec, iceberg.Properties{icetable.PropertyFormatVersion: "2"})
	appendOrders := func(orders []orderdata.Order) {
		t.Helper()
		rows := orderdata.Reader(orders, 1024)
		defer rows.Release()
		txn := load(t, cat, ident).NewTransaction()
		require.NoError(t, txn.Append(ctx, rows, nil))
		_, err := txn.Commit(ctx)
		require.NoError(t, err)
	}
	content := map[time.Time][]orderdata.Order{day(0): orderdata.Day(day(0), 9), day(1): orderdata.Day(day(1), 9), day(2): orderdata.Day(day(2), 9)}
	appendOrders(append(content[day(0)], content[day(1)]...)) // one file of day0 and day1
	appendOrders(content[day(2)])
	gone := append(append(every3rd(content[day(0)]), every3rd(content[day(1)])...), every3rd(content[day(2)])...)
	rowDelete(t, cat, ident, equalityDeletes, gone) // unpartitioned: global
	for d, os := range content {
		content[d] = without(os, gone)
	}
	txn := load(t, cat, ident).NewTransaction()
	require.NoError(t, txn.UpdateSpec(true).AddIdentity("event_date").Commit())
	_, err := txn.Commit(ctx)
	require.NoError(t, err)
	require.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "before icerun")

	w := openWriter(t, cat, ident)
	globals := func() int {
		tbl := load(t, cat, ident)
		return len(liveDeletes(t, tbl, tbl.CurrentSnapshot()))
	}
	content[day(0)] = repriced(orderdata.Day(day(0), 4), 1)
	replaceDay(t, w, day(0), content[day(0)])
	assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after replacing day0: day1's rows kept from the old file, day2's old file, deletes applied")
	assert.Equal(t, 1, globals(), "the global delete still applies to day2's old file")
	assert.False(t, replaceDay(t, w, day(0), content[day(0)]).Unchanged, "rerun while a global delete file lives")

	content[day(2)] = orderdata.Day(day(2), 2)
	replaceDay(t, w, day(2), content[day(2)])
	tbl := load(t, cat, ident)
	assert.Equal(t, string(expected(t, cat, flatten(content))), string(catalogtest.CanonicalScan(t, cat, ident)), "after replacing day2")
	assert.Equal(t, 0, globals(), "the global delete applies to no live data file: dropped")
	assert.Equal(t, int64(1), summaryInt(t, tbl.CurrentSnapshot(), "removed-equality-delete-files"), "removed-equality-delete-files")
	checkDeleteTotals(t, tbl)
	assert.True(t, replaceDay(t, w, day(2), content[day(2)]).Unchanged, "rerun once no delete file is left")
}

// TestReplaceWindowRowLevelDeletes: a window rerun leaves the partitions
// nothing touched (Unchanged in PerPartition) and replaces the one a
// row-level delete touched, restoring its rows and dropping its delete
// files; PerPartition counts its removed data file.
func TestReplaceWindowRowLevelDeletes(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", iceberg.Properties{icetable.PropertyFormatVersion: "2", icetable.WriteDeleteModeKey: icetable.WriteModeMergeOnRead})
	w := openWriter(t, cat, ident)
	orders := flatten(map[time.Time][]orderdata.Order{day(0): orderdata.Day(day(0), 6), day(1): orderdata.Day(day(1), 6), day(2): orderdata.Day(day(2), 6)})
	window := []partition.Key{dayKey(t, w, day(0)), dayKey(t, w, day(1)), dayKey(t, w, day(2))}
	run := func() commit.Result {
		t.Helper()
		rows := orderdata.Reader(orders, 64)
		defer rows.Release()
		res, err := w.ReplaceWindow(ctx, window, table.RejectLate, rows)
		require.NoError(t, err)
		return res
	}
	run()
	rowDelete(t, cat, ident, positionDeletes, every3rd(orderdata.Day(day(1), 6)))
	res := run()
	require.False(t, res.Unchanged)
	require.Len(t, res.PerPartition, 3)
	assert.True(t, res.PerPartition[0].Unchanged, "day0: untouched")
	assert.True(t, res.PerPartition[2].Unchanged, "day2: untouched")
	assert.Equal(t, commit.PartitionResult{Key: window[1].String(), AddedFiles: 1, DeletedFiles: 1, AddedRows: 6, DeletedRows: 6}, res.PerPartition[1], "day1")
	assert.Equal(t, string(expected(t, cat, orders)), string(catalogtest.CanonicalScan(t, cat, ident)), "day1 restored")
	assert.Empty(t, deleteDays(t, load(t, cat, ident)), "day1's delete files are gone")
}
