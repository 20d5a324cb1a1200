package parquetfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

// write writes ids to path as Parquet with the given schema.
func write(t *testing.T, path string, sc *arrow.Schema, ids ...int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		switch fb := b.Field(0).(type) {
		case *array.Int64Builder:
			fb.Append(id)
		case *array.Int32Builder:
			fb.Append(int32(id))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
}

func readAll(t *testing.T, r *Reader) (ids []int64, cols []string) {
	t.Helper()
	for r.Next() {
		rec := r.RecordBatch()
		for i := range rec.NumRows() {
			ids = append(ids, rec.Column(0).(*array.Int64).Value(int(i)))
		}
		cols = cols[:0]
		for _, f := range rec.Schema().Fields() {
			cols = append(cols, f.Name)
		}
	}
	require.NoError(t, r.Err())
	return ids, cols
}

// DuckDB's PARTITION_BY layout: the partition column is only in the
// folder names, and side files are skipped.
func TestOpenHiveFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "event_date=2026-07-14", "data_1.parquet"), idSchema, 3, 4)
	write(t, filepath.Join(dir, "event_date=2026-07-14", "data_0.parquet"), idSchema, 1, 2)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "event_date=2026-07-14", ".data_0.parquet.crc"), nil, 0o644))

	date := arrow.Field{Name: "event_date", Type: arrow.FixedWidthTypes.Date32}
	r, err := Open(context.Background(), []string{dir}, WithBatchRows(1), WithConstant(date, scalar.NewDate32Scalar(20648)))
	require.NoError(t, err)
	defer r.Release()
	require.Equal(t, map[string]string{"event_date": "2026-07-14"}, r.Hive())
	require.Equal(t, []string{"event_date"}, r.Added())
	ids, cols := readAll(t, r)
	require.Equal(t, []int64{1, 2, 3, 4}, ids, "files in name order, every row once")
	require.Equal(t, []string{"id", "event_date"}, cols)
}

// A file that has the constant's column keeps its own.
func TestConstantNotAddedWhenPresent(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.parquet"), idSchema, 1)
	r, err := Open(context.Background(), []string{filepath.Join(dir, "a.parquet")}, WithConstant(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}, scalar.NewInt64Scalar(9)))
	require.NoError(t, err)
	defer r.Release()
	require.Empty(t, r.Added())
	ids, _ := readAll(t, r)
	require.Equal(t, []int64{1}, ids)
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mixed", "a.parquet"), idSchema, 1)
	write(t, filepath.Join(dir, "mixed", "b.parquet"), arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil), 2)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "empty"), 0o755))
	tests := []struct {
		name  string
		paths []string
		opts  []Option
		want  error
	}{
		{"empty folder", []string{filepath.Join(dir, "empty")}, nil, ErrNoFiles},
		{"no paths", nil, nil, ErrNoFiles},
		{"missing", []string{filepath.Join(dir, "nope")}, nil, os.ErrNotExist},
		{"bad batch", []string{filepath.Join(dir, "mixed")}, []Option{WithBatchRows(0)}, ErrBadOption},
		{"constant of another type", []string{filepath.Join(dir, "mixed")}, []Option{WithConstant(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String}, scalar.NewInt64Scalar(1))}, ErrBadOption},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), tc.paths, tc.opts...)
			require.ErrorIs(t, err, tc.want)
		})
	}
	r, err := Open(context.Background(), []string{filepath.Join(dir, "mixed")})
	require.NoError(t, err)
	defer r.Release()
	for r.Next() {
	}
	require.ErrorIs(t, r.Err(), ErrSchemaMismatch)
}

// A corrected input gets a new identity; the same bytes the same one,
// wherever the folder is.
func TestIdentity(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, filepath.Join(a, "d=1", "x.parquet"), idSchema, 1, 2)
	write(t, filepath.Join(b, "d=1", "x.parquet"), idSchema, 1, 2)
	id := func(dir string) string {
		fs, err := List([]string{dir})
		require.NoError(t, err)
		s, err := Identity(dir, fs)
		require.NoError(t, err)
		return s
	}
	first := id(a)
	require.Equal(t, first, id(b))
	write(t, filepath.Join(a, "d=1", "x.parquet"), idSchema, 1, 3)
	require.NotEqual(t, first, id(a))
}
