package parquetfile

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/require"
)

// Each file's rows get the value of its own folders; the folder of a
// path given directly counts too.
func TestHiveColumns(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "day=2026-07-14", "n=1", "a.parquet"), idSchema, 1, 2)
	write(t, filepath.Join(dir, "day=2026-07-15", "n=__HIVE_DEFAULT_PARTITION__", "a.parquet"), idSchema, 3)
	files, err := List([]string{dir})
	require.NoError(t, err)
	fields := FolderColumns(files)
	require.Equal(t, []arrow.Field{
		{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, fields)
	r, err := Open(context.Background(), []string{dir}, WithHiveColumns(fields...))
	require.NoError(t, err)
	defer r.Release()
	require.Equal(t, []string{"day", "n"}, r.HiveAdded())
	var days []string
	var ns []any
	for r.Next() {
		rec := r.RecordBatch()
		for i := range int(rec.NumRows()) {
			days = append(days, rec.Column(1).(*array.Date32).Value(i).ToTime().Format("2006-01-02"))
			if n := rec.Column(2).(*array.Int64); n.IsNull(i) {
				ns = append(ns, nil)
			} else {
				ns = append(ns, n.Value(i))
			}
		}
	}
	require.NoError(t, r.Err())
	require.Equal(t, []string{"2026-07-14", "2026-07-14", "2026-07-15"}, days)
	require.Equal(t, []any{int64(1), int64(1), nil}, ns)

	one := filepath.Join(dir, "day=2026-07-15")
	r2, err := Open(context.Background(), []string{one}, WithHiveColumns(fields[0]))
	require.NoError(t, err, "the opened folder's own name is a Hive folder")
	r2.Release()
}

func TestHiveColumnErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "day=yesterday", "a.parquet"), idSchema, 1)
	write(t, filepath.Join(dir, "other", "b.parquet"), idSchema, 2)
	date := arrow.Field{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true}
	for _, p := range []string{filepath.Join(dir, "day=yesterday"), filepath.Join(dir, "other")} {
		_, err := Open(context.Background(), []string{p}, WithHiveColumns(date))
		require.True(t, errors.Is(err, ErrHiveValue), "%s: %v", p, err)
	}
	// A column the file has is the file's.
	r, err := Open(context.Background(), []string{filepath.Join(dir, "other")}, WithHiveColumns(arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}))
	require.NoError(t, err)
	require.Empty(t, r.HiveAdded())
	r.Release()
}

// Position names the file and the row in it of a batch's row.
func TestPosition(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.parquet"), idSchema, 1, 2, 3)
	write(t, filepath.Join(dir, "b.parquet"), idSchema, 4, 5, 6, 7, 8)
	r, err := Open(context.Background(), []string{dir}, WithBatchRows(2))
	require.NoError(t, err)
	defer r.Release()
	type pos struct {
		file string
		row  int64
	}
	var got []pos
	for r.Next() {
		f, row := r.Position(int(r.RecordBatch().NumRows()) - 1)
		got = append(got, pos{filepath.Base(f), row})
	}
	require.Equal(t, []pos{{"a.parquet", 1}, {"a.parquet", 2}, {"b.parquet", 1}, {"b.parquet", 3}, {"b.parquet", 4}}, got)
}
