package table

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/recordid"
)

// Row lineage (the spec's "Row Lineage", format v3): every row has a
// _row_id and a _last_updated_sequence_number, either written in its data
// file or, where the file holds null (or no such column), inherited: the
// file's first_row_id plus the row's position, and the file's data
// sequence number. icerun writes them explicitly where Java does:
//
//   - a compaction writes every row's current pair, so neither changes;
//   - an upsert writes an updated row's current _row_id and a null
//     _last_updated_sequence_number (the new file's sequence number, that
//     of the upsert's snapshot), and nulls for a new row (a new id); a
//     copy-on-write upsert also writes the current pair of every row it
//     carries over.
//
// iceberg-go reads them (table.WithRowLineage: explicit values, else
// inherited) and writes them (table.WithPreserveRowLineage).

// dropLineage makes every rewritten row get a new id, as before icerun
// kept them. Only BenchmarkRowLineageCost sets it, to measure what keeping
// them costs.
var dropLineage bool

// lineageFields are the Arrow fields of _row_id and
// _last_updated_sequence_number, with their reserved field ids.
func lineageFields() []arrow.Field {
	f := func(n iceberg.NestedField) arrow.Field {
		return arrow.Field{Name: n.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: true,
			Metadata: arrow.NewMetadata([]string{icetable.ArrowParquetFieldIDKey}, []string{strconv.Itoa(n.ID)})}
	}
	return []arrow.Field{f(iceberg.RowID()), f(iceberg.LastUpdatedSequenceNumber())}
}

// withLineageFields is sc with the two lineage fields appended.
func withLineageFields(sc *arrow.Schema) *arrow.Schema {
	meta := sc.Metadata()
	return arrow.NewSchema(append(append([]arrow.Field(nil), sc.Fields()...), lineageFields()...), &meta)
}

// explicitRowIDs returns the _row_id column of a batch iceberg-go scanned
// with it selected and no first_row_id: the file's values, null where the
// id is inherited (or the file has no such column). The batch keeps the
// reference.
func explicitRowIDs(rec arrow.RecordBatch) (*array.Int64, error) {
	return lineageColumn(rec, iceberg.RowIDColumnName, true)
}

// lineageOf returns the _row_id and _last_updated_sequence_number columns
// of a batch iceberg-go scanned with table.WithRowLineage.
func lineageOf(rec arrow.RecordBatch) (rowID, seq *array.Int64, err error) {
	if rowID, err = lineageColumn(rec, iceberg.RowIDColumnName, false); err != nil {
		return nil, nil, err
	}
	if seq, err = lineageColumn(rec, iceberg.LastUpdatedSequenceNumberColumnName, false); err != nil {
		return nil, nil, err
	}
	return rowID, seq, nil
}

// lineageColumn is rec's column name, an int64 lineage column, without
// nulls unless nulls.
func lineageColumn(rec arrow.RecordBatch, name string, nulls bool) (*array.Int64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("scan returned %d row lineage columns %s, want 1", len(idx), name)
	}
	a, ok := rec.Column(idx[0]).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("row lineage column %s is %s, want int64", name, rec.Column(idx[0]).DataType())
	}
	if !nulls && a.NullN() > 0 {
		return nil, fmt.Errorf("row lineage column %s: %d rows without a value", name, a.NullN())
	}
	return a, nil
}

// appendLineage is rec with rowID and seq appended as its last columns
// (withLineageFields of its schema). It takes its own references.
func appendLineage(rec arrow.RecordBatch, rowID, seq arrow.Array) arrow.RecordBatch {
	cols := append(append([]arrow.Array(nil), rec.Columns()...), rowID, seq)
	return array.NewRecordBatch(withLineageFields(rec.Schema()), cols, rec.NumRows())
}

// withoutLineage is rec without its last two columns, the lineage ones
// appendLineage appended.
func withoutLineage(rec arrow.RecordBatch) arrow.RecordBatch {
	n := len(rec.Columns()) - 2
	meta := rec.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields()[:n], &meta), rec.Columns()[:n], rec.NumRows())
}

// carriedLineage builds the lineage columns of n rows, a merge-on-read
// upsert's rows: id(row) is the row's current _row_id when it replaces a
// live row (ok), else it is new and gets null; every
// _last_updated_sequence_number is null (the new file's).
func carriedLineage(n int, id func(row int) (int64, bool)) (rowID, seq arrow.Array) {
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	ids.Reserve(n)
	for row := range n {
		if v, ok := id(row); ok {
			ids.Append(v)
		} else {
			ids.AppendNull()
		}
	}
	nulls := array.NewInt64Builder(memory.DefaultAllocator)
	defer nulls.Release()
	nulls.AppendNulls(n)
	return ids.NewArray(), nulls.NewArray()
}

// hasLineage reports whether the rows of tasks have row lineage to keep: a
// v3 table whose every file has a first_row_id and a data sequence number
// (a file of a table upgraded to v3 that no snapshot assigned ids to has
// none: its rows get new ids, as in Java's rewrite). A v3 table with a
// column of its own named _row_id or _last_updated_sequence_number
// (another engine's schema) fails with commit.ErrUnsupported: its rows
// cannot carry lineage columns of those names.
func hasLineage(tbl *icetable.Table, tasks []icetable.FileScanTask) (bool, error) {
	if tbl.Metadata().Version() < 3 || dropLineage {
		return false, nil
	}
	if err := lineageNameClash(tbl.Schema()); err != nil {
		return false, err
	}
	for _, t := range tasks {
		if t.FirstRowID == nil || t.DataSequenceNumber == nil {
			return false, nil
		}
	}
	return true, nil
}

// lineageNameClash fails with commit.ErrUnsupported when sch has a
// column of its own named _row_id or _last_updated_sequence_number:
// iceberg-go's reader takes it for the row lineage column (and refuses
// it below format v3), icerun's writers add lineage columns of those
// names.
func lineageNameClash(sch *iceberg.Schema) error {
	for _, f := range lineageFields() {
		if c, ok := sch.FindFieldByName(f.Name); ok {
			return fmt.Errorf("%w: column %q (field id %d) has the name of a row lineage column", commit.ErrUnsupported, f.Name, c.ID)
		}
	}
	return nil
}

// carryRowIDs wraps add (of batches to a stager that preserves lineage)
// for an upsert's rows: each batch gets the lineage columns, the _row_id
// of the live row its key replaces (from ids) or null, and a null
// _last_updated_sequence_number.
func (u *upsert) carryRowIDs(add func(arrow.RecordBatch) error, ids map[string]int64) (func(arrow.RecordBatch) error, error) {
	enc, err := recordid.NewEncoder(u.keyColumns...)
	if err != nil {
		return nil, err
	}
	var buf []byte
	return func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if err := enc.Bind(rec); err != nil {
			return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		rowID, seq := carriedLineage(int(rec.NumRows()), func(row int) (int64, bool) {
			buf = enc.Append(buf[:0], row)
			id, ok := ids[string(buf)]
			return id, ok
		})
		out := appendLineage(rec, rowID, seq)
		rowID.Release()
		seq.Release()
		return add(out)
	}, nil
}
