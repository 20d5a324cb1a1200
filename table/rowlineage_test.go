package table_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// lineage is a row's _row_id and _last_updated_sequence_number.
type lineage struct{ rowID, seq int64 }

// readLineage reads the live rows' lineage by order_id, as iceberg-go
// projects it (explicit values in the file, else inherited: first_row_id
// + position and the file's data sequence number), and the table's
// current sequence number and next row id.
func readLineage(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) (rows map[int64]lineage, seq, next int64) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	_, batches, err := tbl.Scan(icetable.WithSelectedFields("order_id", iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName)).ToArrowRecords(ctx)
	require.NoError(t, err)
	rows = map[int64]lineage{}
	ids := map[int64]int64{}
	for rec, err := range batches {
		require.NoError(t, err)
		sc := rec.Schema()
		key := rec.Column(sc.FieldIndices("order_id")[0]).(*array.Int64)
		rid := rec.Column(sc.FieldIndices(iceberg.RowIDColumnName)[0]).(*array.Int64)
		rseq := rec.Column(sc.FieldIndices(iceberg.LastUpdatedSequenceNumberColumnName)[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			require.False(t, rid.IsNull(i) || rseq.IsNull(i), "order %d: null lineage", key.Value(i))
			if other, dup := ids[rid.Value(i)]; dup {
				t.Fatalf("_row_id %d of orders %d and %d", rid.Value(i), other, key.Value(i))
			}
			ids[rid.Value(i)] = key.Value(i)
			rows[key.Value(i)] = lineage{rid.Value(i), rseq.Value(i)}
		}
		rec.Release()
	}
	return rows, tbl.CurrentSnapshot().SequenceNumber, tbl.Metadata().NextRowID()
}

// TestRowLineageMergeOnReadUpsertAndCompact checks on a v3 table that a
// merge-on-read upsert keeps an updated row's _row_id (its
// _last_updated_sequence_number becomes the upsert's), gives new rows new
// ids, leaves other rows alone, and that a compaction changes neither
// column of any row.
func TestRowLineageMergeOnReadUpsertAndCompact(t *testing.T) {
	t.Parallel()
	// Without column metrics the upsert cannot tell from a file's metrics
	// that it holds no explicit _row_id: it reads the column.
	for name, metrics := range map[string]string{"metrics": "truncate(16)", "no-metrics": "none"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "3",
				table.PropertyUpsertMode: table.ModeMergeOnRead, "write.metadata.metrics.default": metrics})
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100)
			written, _, next := readLineage(t, cat, ident)
			require.Len(t, written, 100)

			afterFirst := upsertLineage(t, cat, ident, w, written, next, changedOrders(50, 150, 1_000_000))

			res, err := w.Compact(ctx, dayKey(t, w, day0))
			require.NoError(t, err)
			require.False(t, res.Unchanged, "Compact(partition with a deletion vector).Unchanged")
			compacted, _, _ := readLineage(t, cat, ident)
			assert.Equal(t, afterFirst, compacted, "lineage of every row after Compact, want as before")

			// Updated again after the compaction: the ids now come from the
			// compacted file's explicit _row_id column.
			_, _, next = readLineage(t, cat, ident)
			upsertLineage(t, cat, ident, w, compacted, next, changedOrders(120, 170, 2_000_000))
		})
	}
}

// upsertLineage upserts changed with w and checks the rows' lineage
// against before (next was the table's next row id): an updated row keeps
// its _row_id and gets the upsert's sequence number, a new row a new id
// and that sequence number, other rows keep both. It returns the lineage
// after.
func upsertLineage(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer, before map[int64]lineage, next int64, changed []orderdata.Order) map[int64]lineage {
	t.Helper()
	upsert(t, w, changed)
	after, seq, _ := readLineage(t, cat, ident)
	isChanged := map[int64]bool{}
	for _, o := range changed {
		isChanged[o.ID] = true
		got := after[o.ID]
		if old, ok := before[o.ID]; ok {
			assert.Equal(t, lineage{old.rowID, seq}, got, "order %d updated: want its _row_id kept, the upsert's sequence number", o.ID)
		} else {
			assert.GreaterOrEqual(t, got.rowID, next, "order %d inserted: want a new _row_id", o.ID)
			assert.Equal(t, seq, got.seq, "order %d inserted: _last_updated_sequence_number", o.ID)
		}
	}
	for id, old := range before {
		if !isChanged[id] {
			assert.Equal(t, old, after[id], "order %d not in the upsert: lineage", id)
		}
	}
	return after
}

// TestRowLineageCopyOnWriteUpsert: a copy-on-write upsert rewrites the
// partition, keeping every row's lineage as Java's copy-on-write MERGE
// does: rows carried over keep both columns, updated rows their _row_id.
func TestRowLineageCopyOnWriteUpsert(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{"format-version": "3"})
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 100)
	written, _, next := readLineage(t, cat, ident)
	after := upsertLineage(t, cat, ident, w, written, next, changedOrders(50, 150, 1_000_000))
	_, _, next = readLineage(t, cat, ident)
	upsertLineage(t, cat, ident, w, after, next, changedOrders(20, 60, 2_000_000))
}

// TestRowLineageCompactSorted: a compaction that sorts the rows (the
// table's sort order), in runs spilled to disk and merged, keeps every
// row's lineage.
func TestRowLineageCompactSorted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	byCustomer, err := icetable.NewSortOrder(1, []icetable.SortField{{SourceIDs: []int{2}, Transform: iceberg.IdentityTransform{}, Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}})
	require.NoError(t, err)
	cat, _ := catalogtest.New(t)
	ident := icetable.Identifier{catalogtest.Namespace, "fact_orders"}
	spec := orderdata.Spec
	_, err = cat.CreateTable(ctx, ident, orderdata.Schema, catalog.WithPartitionSpec(&spec), catalog.WithSortOrder(byCustomer),
		catalog.WithProperties(iceberg.Properties{"format-version": "3", table.PropertyUpsertMode: table.ModeMergeOnRead}))
	require.NoError(t, err)
	w := open(t, cat, ident, table.WithParallelWrite(1, 40))
	replaceDay(t, w, day0, 300)
	written, _, next := readLineage(t, cat, ident)
	before := upsertLineage(t, cat, ident, w, written, next, changedOrders(100, 350, 1_000_000))
	res, err := w.Compact(ctx, dayKey(t, w, day0))
	require.NoError(t, err)
	require.False(t, res.Unchanged, "Compact(partition with a deletion vector).Unchanged")
	after, _, _ := readLineage(t, cat, ident)
	assert.Equal(t, before, after, "lineage of every row after a sorted Compact, want as before")
	for _, task := range liveTasks(t, cat, ident) {
		require.NotNil(t, task.File.SortOrderID(), "sort order of %s", task.File.FilePath())
		assert.Equal(t, 1, *task.File.SortOrderID(), "sort order of %s", task.File.FilePath())
	}
}

// TestRowLineageColumnsInFile reads the Parquet file a merge-on-read
// upsert wrote: it holds _row_id and _last_updated_sequence_number as
// optional longs with the reserved field ids, the updated rows' ids
// explicit and nulls for the new rows' ids and every sequence number
// (inherited from the file). A compacted file holds both for every row.
func TestRowLineageColumnsInFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident := morTable(t, "3")
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 100)
	written, _, _ := readLineage(t, cat, ident)
	before := liveTasks(t, cat, ident)
	upsert(t, w, changedOrders(90, 110, 1_000_000)) // 10 updated, 10 new
	var added []icetable.FileScanTask
	for _, task := range liveTasks(t, cat, ident) {
		if !slices.Contains(paths(before), task.File.FilePath()) {
			added = append(added, task)
		}
	}
	require.Len(t, added, 1, "data files the upsert added")
	rows := fileLineage(t, cat, ident, added[0].File.FilePath())
	require.Len(t, rows, 20)
	for id, l := range rows {
		if old, ok := written[id]; ok {
			assert.Equal(t, &old.rowID, l[0], "order %d updated: _row_id in the file", id)
		} else {
			assert.Nil(t, l[0], "order %d new: _row_id in the file, want null", id)
		}
		assert.Nil(t, l[1], "order %d: _last_updated_sequence_number in the file, want null", id)
	}

	res, err := w.Compact(ctx, dayKey(t, w, day0))
	require.NoError(t, err)
	require.False(t, res.Unchanged)
	want, _, _ := readLineage(t, cat, ident)
	for _, task := range liveTasks(t, cat, ident) {
		for id, l := range fileLineage(t, cat, ident, task.File.FilePath()) {
			require.NotNil(t, l[0], "order %d compacted: _row_id in the file", id)
			require.NotNil(t, l[1], "order %d compacted: _last_updated_sequence_number in the file", id)
			assert.Equal(t, lineage{*l[0], *l[1]}, want[id], "order %d compacted: lineage in the file", id)
		}
	}
}

// fileLineage reads the order_id, _row_id and _last_updated_sequence_number
// columns of a data file with pqarrow, the lineage ones found by their
// reserved field ids (optional longs), by order_id; nil is a null.
func fileLineage(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, path string) map[int64][2]*int64 {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	fsys, err := tbl.FS(context.Background())
	require.NoError(t, err)
	in, err := fsys.Open(path)
	require.NoError(t, err)
	defer in.Close()
	rdr, err := file.NewParquetReader(in)
	require.NoError(t, err)
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	data, err := fr.ReadTable(context.Background())
	require.NoError(t, err)
	defer data.Release()
	col := func(fieldID int, name string) *array.Int64 {
		for i, f := range data.Schema().Fields() {
			if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok && v == strconv.Itoa(fieldID) {
				require.Equal(t, name, f.Name, "column of field id %d", fieldID)
				require.Equal(t, arrow.PrimitiveTypes.Int64, f.Type, "type of %s", name)
				require.Equal(t, fieldID != 1, f.Nullable, "%s optional", name)
				chunks := data.Column(i).Data().Chunks()
				require.Len(t, chunks, 1)
				return chunks[0].(*array.Int64)
			}
		}
		t.Fatalf("%s: no column with field id %d", path, fieldID)
		return nil
	}
	ids := col(1, "order_id")
	rowID := col(iceberg.RowIDFieldID, iceberg.RowIDColumnName)
	seq := col(iceberg.LastUpdatedSequenceNumberFieldID, iceberg.LastUpdatedSequenceNumberColumnName)
	value := func(a *array.Int64, i int) *int64 {
		if a.IsNull(i) {
			return nil
		}
		v := a.Value(i)
		return &v
	}
	out := map[int64][2]*int64{}
	for i := range ids.Len() {
		out[ids.Value(i)] = [2]*int64{value(rowID, i), value(seq, i)}
	}
	return out
}
