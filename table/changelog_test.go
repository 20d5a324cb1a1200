package table_test

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// event is one change of an order: the current-state table keeps the
// latest per id.
type event struct {
	id      int64
	region  string // the partition source column
	status  string // "deleted" is a delete
	version int64
	offset  int64 // the source offset: the last tie-breaker
	ts      time.Time
}

var changeSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "region", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "status", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "version", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 5, Name: "offset", Type: iceberg.PrimitiveTypes.Int64},
	iceberg.NestedField{ID: 6, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
)

var changeFields = []arrow.Field{
	{Name: "order_id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "status", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "version", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "offset", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}

func events(evs ...event) array.RecordReader {
	return catalogtest.Reader(changeFields, len(evs), func(b *array.RecordBuilder, row int) {
		e := evs[row]
		b.Field(0).(*array.Int64Builder).Append(e.id)
		b.Field(1).(*array.StringBuilder).Append(e.region)
		b.Field(2).(*array.StringBuilder).Append(e.status)
		b.Field(3).(*array.Int64Builder).Append(e.version)
		b.Field(4).(*array.Int64Builder).Append(e.offset)
		ts := e.ts
		if ts.IsZero() {
			ts = day0.Add(time.Duration(e.version) * time.Minute)
		}
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
	})
}

// byVersion is the change spec of the order tests: ordered by version,
// then offset; status "deleted" deletes.
var byVersion = table.ChangeSpec{
	Key:    []string{"order_id"},
	Order:  []string{"version", "offset"},
	Delete: table.DeleteWhen{Column: "status", Value: "deleted"},
}

// changeModes are the table layouts every order test runs on.
var changeModes = []struct {
	name  string
	props iceberg.Properties
}{
	{"cow-v2", iceberg.Properties{"format-version": "2"}},
	{"cow-v3", iceberg.Properties{"format-version": "3"}},
	{"mor-v2", iceberg.Properties{"format-version": "2", table.PropertyUpsertMode: table.ModeMergeOnRead}},
	{"mor-v3", iceberg.Properties{"format-version": "3", table.PropertyUpsertMode: table.ModeMergeOnRead}},
}

// forEachMode runs f on a fresh orders_current table, partitioned by
// region, in each layout.
func forEachMode(t *testing.T, f func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer)) {
	for _, m := range changeModes {
		t.Run(m.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
			ident := catalogtest.CreateTable(t, cat, "orders_current", changeSchema, spec, m.props)
			f(t, cat, ident, open(t, cat, ident))
		})
	}
}

func apply(t *testing.T, w *table.Writer, cs table.ChangeSpec, evs ...event) table.ChangeResult {
	t.Helper()
	rows := events(evs...)
	defer rows.Release()
	res, err := w.ApplyChanges(context.Background(), rows, cs)
	require.NoError(t, err, "ApplyChanges(%v)", evs)
	return res
}

// current reads the table: by order id, "region/status/version".
func current(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[int64]string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	out := map[int64]string{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	_, recs, err := tbl.Scan().ToArrowRecords(context.Background())
	require.NoError(t, err)
	for rec, err := range recs {
		require.NoError(t, err)
		ids := rec.Column(rec.Schema().FieldIndices("order_id")[0]).(*array.Int64)
		reg := rec.Column(rec.Schema().FieldIndices("region")[0]).(*array.String)
		st := rec.Column(rec.Schema().FieldIndices("status")[0]).(*array.String)
		ver := rec.Column(rec.Schema().FieldIndices("version")[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			_, dup := out[id]
			require.False(t, dup, "order %d has two live rows", id)
			out[id] = fmt.Sprintf("%s/%s/%d", reg.Value(i), st.Value(i), ver.Value(i))
		}
		rec.Release()
	}
	return out
}

func TestApplyChangesLateOlderEventDoesNotOverwrite(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "created", version: 1},
			event{id: 1, region: "eu", status: "paid", version: 2},
			event{id: 1, region: "eu", status: "shipped", version: 3},
			event{id: 2, region: "eu", status: "created", version: 1})
		require.Equal(t, map[int64]string{1: "eu/shipped/3", 2: "eu/created/1"}, current(t, cat, ident))

		// "paid" at version 2 arrives late, after "shipped".
		res := apply(t, w, byVersion, event{id: 1, region: "eu", status: "paid", version: 2})
		assert.Equal(t, int64(1), res.Stale, "ApplyChanges(late paid).Stale")
		assert.True(t, res.Unchanged, "ApplyChanges(late paid).Unchanged")
		// A redelivered "created" beside a new change of another key.
		res = apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "created", version: 1},
			event{id: 2, region: "eu", status: "paid", version: 2})
		assert.Equal(t, int64(1), res.Stale, "ApplyChanges(redelivered created, new paid).Stale")
		assert.Equal(t, int64(1), res.Upserted, "ApplyChanges(redelivered created, new paid).Upserted")
		assert.Equal(t, map[int64]string{1: "eu/shipped/3", 2: "eu/paid/2"}, current(t, cat, ident),
			"after a late paid and a redelivered created, want the shipped state kept")
	})
}

func TestApplyChangesDeleteStaysDeleted(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "created", version: 1},
			event{id: 2, region: "eu", status: "created", version: 1})
		res := apply(t, w, byVersion, event{id: 1, region: "eu", status: "deleted", version: 4})
		assert.Equal(t, int64(1), res.Deleted, "ApplyChanges(delete).Deleted")
		assert.Equal(t, int64(1), res.Tombstones, "ApplyChanges(delete).Tombstones")
		require.Equal(t, map[int64]string{2: "eu/created/1"}, current(t, cat, ident))

		// The late "shipped" of the deleted order, and a delete that
		// arrives before its order's creation.
		res = apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "shipped", version: 3},
			event{id: 3, region: "us", status: "deleted", version: 2})
		assert.Equal(t, int64(1), res.Stale, "ApplyChanges(late shipped of a deleted order).Stale")
		res = apply(t, w, byVersion, event{id: 3, region: "us", status: "created", version: 1})
		assert.Equal(t, int64(1), res.Stale, "ApplyChanges(created after its delete).Stale")
		assert.Equal(t, map[int64]string{2: "eu/created/1"}, current(t, cat, ident),
			"after late events of deleted orders, want them to stay deleted")

		// A newer event brings the key back.
		apply(t, w, byVersion, event{id: 1, region: "eu", status: "created", version: 5})
		assert.Equal(t, map[int64]string{1: "eu/created/5", 2: "eu/created/1"}, current(t, cat, ident))
	})
}

func TestApplyChangesTiesAndMultiColumnOrder(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		// Order by version alone: two rows of version 2, the last wins.
		byVersionOnly := byVersion
		byVersionOnly.Order = []string{"version"}
		apply(t, w, byVersionOnly,
			event{id: 1, region: "eu", status: "paid", version: 2, offset: 7},
			event{id: 1, region: "eu", status: "shipped", version: 2, offset: 3})
		require.Equal(t, map[int64]string{1: "eu/shipped/2"}, current(t, cat, ident), "a tie: want the last in input order")

		// Order by version, then offset: offset 9 wins over the later 8.
		apply(t, w, byVersion,
			event{id: 2, region: "eu", status: "paid", version: 2, offset: 9},
			event{id: 2, region: "eu", status: "refunded", version: 2, offset: 8})
		apply(t, w, byVersion, event{id: 2, region: "eu", status: "created", version: 2, offset: 1})
		assert.Equal(t, map[int64]string{1: "eu/shipped/2", 2: "eu/paid/2"}, current(t, cat, ident),
			"ordered by (version, offset): want the greatest offset of version 2")
	})
}

func TestApplyChangesPartitionChangeLeavesNoOldVersion(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "created", version: 1},
			event{id: 2, region: "eu", status: "created", version: 1},
			// In one input: created in eu, moved to us.
			event{id: 3, region: "eu", status: "created", version: 1},
			event{id: 3, region: "us", status: "paid", version: 2})
		require.Equal(t, map[int64]string{1: "eu/created/1", 2: "eu/created/1", 3: "us/paid/2"}, current(t, cat, ident))
		res := apply(t, w, byVersion, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, []string{"region=eu", "region=us"}, res.Partitions, "partitions of the move")
		// A late old version in the old partition changes nothing.
		apply(t, w, byVersion, event{id: 1, region: "eu", status: "created", version: 1})
		assert.Equal(t, map[int64]string{1: "us/paid/2", 2: "eu/created/1", 3: "us/paid/2"}, current(t, cat, ident),
			"after moving orders 1 and 3 to us, want no version of them left in eu")
	})
}

func TestApplyChangesIsOneSnapshotAndRerunIsUnchanged(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion,
			event{id: 1, region: "eu", status: "created", version: 1},
			event{id: 2, region: "us", status: "created", version: 1})
		before := catalogtest.Snapshots(t, cat, ident)
		batch := []event{
			{id: 1, region: "eu", status: "deleted", version: 2},
			{id: 2, region: "us", status: "paid", version: 2},
			{id: 3, region: "eu", status: "created", version: 1},
		}
		res := apply(t, w, byVersion, batch...)
		assert.Equal(t, before+1, catalogtest.Snapshots(t, cat, ident), "snapshots after upserts and a delete in one call")
		assert.Equal(t, int64(2), res.Upserted, "Upserted")
		assert.Equal(t, int64(1), res.Deleted, "Deleted")
		want := map[int64]string{2: "us/paid/2", 3: "eu/created/1"}
		require.Equal(t, want, current(t, cat, ident))

		rerun := apply(t, w, byVersion, batch...)
		assert.True(t, rerun.Unchanged, "rerun: Unchanged")
		assert.Equal(t, int64(3), rerun.Stale, "rerun: Stale")
		assert.Equal(t, int64(0), rerun.Tombstones, "rerun: Tombstones")
		assert.Equal(t, before+1, catalogtest.Snapshots(t, cat, ident), "snapshots after the rerun")
		assert.Equal(t, want, current(t, cat, ident), "table after the rerun")
	})
}

func TestApplyChangesTombstoneWrittenTableNotCommitted(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion, event{id: 1, region: "eu", status: "created", version: 1})
		// The table's commit fails after the tombstone table's landed.
		failing := &failMainCommit{Catalog: cat, ident: ident}
		fw := open(t, failing, ident, table.WithRetry(commit.Policy{Attempts: 1}))
		rows := events(event{id: 1, region: "eu", status: "deleted", version: 2})
		_, err := fw.ApplyChanges(context.Background(), rows, byVersion)
		rows.Release()
		require.Error(t, err, "ApplyChanges with the table's commit failing")
		require.Equal(t, map[int64]string{1: "eu/created/1"}, current(t, cat, ident), "the table after its commit failed")

		res := apply(t, w, byVersion, event{id: 1, region: "eu", status: "deleted", version: 2})
		assert.Equal(t, int64(1), res.Deleted, "rerun: Deleted")
		assert.Equal(t, map[int64]string{}, current(t, cat, ident), "the table after the rerun")
	})
}

// failMainCommit fails every commit of ident (not of its side tables).
type failMainCommit struct {
	catalog.Catalog
	ident icetable.Identifier
}

func (c *failMainCommit) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if fmt.Sprint(ident) == fmt.Sprint(c.ident) {
		return nil, "", errors.New("injected: the catalog refuses the commit")
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// morChanges is a fresh merge-on-read orders_current table of format,
// partitioned by region, and its writer.
func morChanges(t *testing.T, format string) (catalog.Catalog, icetable.Identifier, *table.Writer) {
	t.Helper()
	cat, _ := catalogtest.New(t)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{2}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
	ident := catalogtest.CreateTable(t, cat, "orders_current", changeSchema, spec,
		iceberg.Properties{"format-version": format, table.PropertyUpsertMode: table.ModeMergeOnRead})
	return cat, ident, open(t, cat, ident)
}

func TestApplyChangesMergeOnReadWritesDeleteFiles(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"2", "3"} {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident, w := morChanges(t, format)
			apply(t, w, byVersion,
				event{id: 1, region: "eu", status: "created", version: 1},
				event{id: 2, region: "eu", status: "created", version: 1})
			apply(t, w, byVersion,
				event{id: 1, region: "us", status: "paid", version: 2},
				event{id: 2, region: "eu", status: "deleted", version: 2})
			sum := summary(t, cat, ident)
			deletes := "added-position-delete-files"
			if format == "3" {
				deletes = "added-dvs"
			}
			assert.Equal(t, "1", sum.Properties[deletes], "summary %s of a move and a delete in one partition", deletes)
			assert.Equal(t, "2", sum.Properties["added-position-deletes"], "summary added-position-deletes")
			assert.Equal(t, "1", sum.Properties["added-records"], "summary added-records")
			assert.Equal(t, map[int64]string{1: "us/paid/2"}, current(t, cat, ident))
		})
	}
}

func TestUpsertNewerOnly(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, _ *table.Writer) {
		w := open(t, cat, ident, table.WithUpsertOrder("version", "offset"), table.WithUpsertNewerOnly())
		upsertEvents := func(evs ...event) commit.Result {
			rows := events(evs...)
			defer rows.Release()
			res, err := w.Upsert(context.Background(), rows, "order_id")
			require.NoError(t, err)
			return res
		}
		upsertEvents(event{id: 1, region: "eu", status: "shipped", version: 3}, event{id: 2, region: "eu", status: "created", version: 1})
		res := upsertEvents(event{id: 1, region: "eu", status: "paid", version: 2}, event{id: 2, region: "eu", status: "paid", version: 2})
		assert.Equal(t, int64(1), res.Stale, "Upsert(late paid of a shipped order, new paid).Stale")
		assert.Equal(t, map[int64]string{1: "eu/shipped/3", 2: "eu/paid/2"}, current(t, cat, ident),
			"after an older upsert with WithUpsertNewerOnly, want the newer state kept")
	})
}

func TestUpsertNewerOnlyNeedsOrder(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders_current", changeSchema, *iceberg.UnpartitionedSpec, nil)
	_, err := table.Open(context.Background(), cat, ident, table.WithUpsertNewerOnly())
	assert.ErrorIs(t, err, table.ErrBadOption, "Open(WithUpsertNewerOnly without WithUpsertOrder)")
}

func TestApplyChangesRetentionRoutesOldUnknownKeysToLateTable(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		cs := table.ChangeSpec{
			Key:       []string{"order_id"},
			Order:     []string{"event_ts", "offset"},
			Delete:    table.DeleteWhen{Column: "status", Value: "deleted"},
			Retention: 24 * time.Hour,
		}
		at := func(days int) time.Time { return day0.AddDate(0, 0, days) }
		apply(t, w, cs,
			event{id: 1, region: "eu", status: "created", ts: at(0)},
			event{id: 2, region: "eu", status: "created", ts: at(0)})
		apply(t, w, cs, event{id: 1, region: "eu", status: "deleted", ts: at(10)})
		// Day 10 is the newest order: the bound is day 9. Order 1's
		// tombstone holds; order 3 is unknown and older than the bound;
		// order 4 is unknown and within it.
		res := apply(t, w, cs,
			event{id: 1, region: "eu", status: "shipped", ts: at(5)},
			event{id: 3, region: "eu", status: "created", ts: at(2)},
			event{id: 4, region: "eu", status: "created", ts: at(9).Add(time.Hour)})
		assert.Equal(t, int64(1), res.Stale, "Stale (the deleted order's late event)")
		assert.Equal(t, int64(1), res.LateRows, "LateRows (the unknown order older than the bound)")
		assert.Equal(t, "db.orders_current_late", res.LateTable, "LateTable")
		assert.Equal(t, int64(1), res.Upserted, "Upserted")
		assert.Equal(t, map[int64]string{2: "eu/created/0", 4: "eu/created/0"}, current(t, cat, ident))

		late, err := cat.LoadTable(context.Background(), table.LateTable(ident))
		require.NoError(t, err)
		arrowTbl, err := late.Scan(icetable.WithSelectedFields("order_id", table.LateReason)).ToArrowTable(context.Background())
		require.NoError(t, err)
		defer arrowTbl.Release()
		require.Equal(t, int64(1), arrowTbl.NumRows(), "rows of the late table")
		assert.Equal(t, int64(3), arrowTbl.Column(0).Data().Chunk(0).(*array.Int64).Value(0), "late order id")
		assert.Equal(t, table.ReasonPastRetention, arrowTbl.Column(1).Data().Chunk(0).(*array.String).Value(0), "late reason")

		// A rerun routes it again into the same late partition: still one.
		apply(t, w, cs, event{id: 3, region: "eu", status: "created", ts: at(2)})
		assert.Equal(t, 1, countRows(t, cat, table.LateTable(ident)), "late rows after the rerun")
		assert.Equal(t, 1, countRows(t, cat, table.TombstoneTable(ident)), "tombstones within the retention")

		// Day 20 moves the bound to day 19: order 1's tombstone (day 10) is
		// forgotten and pruned, and its event of day 12 is late.
		apply(t, w, cs, event{id: 5, region: "eu", status: "created", ts: at(20)})
		if n := countRows(t, cat, table.TombstoneTable(ident)); n != 0 {
			t.Errorf("tombstones after the bound passed them = %d, want 0", n)
		}
		res = apply(t, w, cs, event{id: 1, region: "eu", status: "shipped", ts: at(12)})
		assert.Equal(t, int64(1), res.LateRows, "LateRows of a forgotten key's old event")
		assert.NotContains(t, current(t, cat, ident), int64(1), "the forgotten key's old event must not be applied")
	})
}

func countRows(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) int {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	at, err := tbl.Scan().ToArrowTable(context.Background())
	require.NoError(t, err)
	defer at.Release()
	return int(at.NumRows())
}

func TestApplyChangesComparesAgainWhenTheTableMoved(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		apply(t, w, byVersion, event{id: 1, region: "eu", status: "created", version: 1})
		// Another writer commits "shipped" between this call's comparison
		// and its commit of the older "paid".
		racing := &catalogtest.Interposer{Catalog: cat, Before: func() {
			apply(t, open(t, cat, ident), byVersion, event{id: 1, region: "eu", status: "shipped", version: 3})
		}}
		rows := events(event{id: 1, region: "eu", status: "paid", version: 2})
		defer rows.Release()
		res, err := open(t, racing, ident).ApplyChanges(context.Background(), rows, byVersion)
		require.NoError(t, err)
		assert.Equal(t, int64(1), res.Stale, "Stale of the change that lost the race to a newer one")
		assert.Equal(t, map[int64]string{1: "eu/shipped/3"}, current(t, cat, ident), "after the race, want the newer state")
	})
}

func TestApplyChangesBadSpec(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders_current", changeSchema, *iceberg.UnpartitionedSpec, iceberg.Properties{"format-version": "2"})
	w := open(t, cat, ident)
	for _, tc := range []struct {
		name string
		cs   table.ChangeSpec
	}{
		{"no key", table.ChangeSpec{Order: []string{"version"}}},
		{"no order", table.ChangeSpec{Key: []string{"order_id"}}},
		{"unknown key column", table.ChangeSpec{Key: []string{"nope"}, Order: []string{"version"}}},
		{"unknown order column", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"nope"}}},
		{"unknown delete column", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"version"}, Delete: table.DeleteWhen{Column: "nope", Value: "x"}}},
		{"retention on an integer order", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"version"}, Retention: time.Hour}},
		{"retention on a string order", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"status", "event_ts"}, Retention: time.Hour}},
		{"retention on a string order", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"status", "event_ts"}, Retention: time.Hour}},
		{"retention on a timestamp second order", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"version", "event_ts"}, Retention: time.Hour}},
		{"negative retention", table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"event_ts"}, Retention: -time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := events(event{id: 1, region: "eu", status: "created", version: 1})
			defer rows.Release()
			_, err := w.ApplyChanges(context.Background(), rows, tc.cs)
			assert.ErrorIs(t, err, table.ErrBadChangeSpec, "ApplyChanges(%+v)", tc.cs)
		})
	}
	assert.Equal(t, 0, catalogtest.Snapshots(t, cat, ident), "snapshots after bad change specs")
}
