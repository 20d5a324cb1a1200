package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
)

// openInput opens the Parquet files of paths as the rows of key (nil: of
// the partitions the rows produce). A table column that the files lack
// is filled, and reported on stderr: an identity partition column from
// the key, any other column from the Hive folders (col=value) above each
// file. A folder column that is no table column is reported as not read.
func (e *env) openInput(ctx context.Context, tbl *icetable.Table, key *partition.Key, paths []string) (*parquetfile.Reader, error) {
	var opts []parquetfile.Option
	if key != nil {
		var err error
		if opts, err = keyColumns(tbl, *key); err != nil {
			return nil, err
		}
	}
	files, err := parquetfile.List(paths)
	if err != nil {
		return nil, err
	}
	folders, unknown := folderColumns(tbl, files)
	opts = append(opts, parquetfile.WithHiveColumns(folders...))
	r, err := parquetfile.Open(ctx, paths, opts...)
	if err != nil {
		return nil, err
	}
	label := "input"
	if key != nil {
		label = key.String()
	}
	if added := r.Added(); len(added) > 0 {
		e.note("%s: filled %s from the key (the input files lack %s)", label, strings.Join(added, ", "), plural(len(added), "it", "them"))
	}
	if added := r.HiveAdded(); len(added) > 0 {
		e.note("%s: filled %s from the Hive folders (col=value) above each file (the input files lack %s)", label, strings.Join(added, ", "), plural(len(added), "it", "them"))
	}
	if len(unknown) > 0 {
		e.note("%s: not read: folder %s %s no table column", label, strings.Join(unknown, ", "), plural(len(unknown), "column is", "columns are"))
	}
	return r, nil
}

// folderColumns returns the top-level table columns that the files'
// Hive folders name, as Arrow fields, and the folder columns the table
// lacks.
func folderColumns(tbl *icetable.Table, files []parquetfile.File) (fields []arrow.Field, unknown []string) {
	seen := map[string]bool{}
	for _, f := range files {
		for _, name := range f.HiveNames {
			if seen[name] {
				continue
			}
			seen[name] = true
			col, ok := tbl.Schema().FindFieldByName(name)
			if !ok || strings.Contains(name, ".") {
				unknown = append(unknown, name)
				continue
			}
			dt, err := icetable.TypeToArrowType(col.Type, false, false)
			if err != nil {
				unknown = append(unknown, name)
				continue
			}
			fields = append(fields, arrow.Field{Name: col.Name, Type: dt, Nullable: !col.Required})
		}
	}
	return fields, unknown
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inInput rewords a row outside its key with the row's place in the
// input (its file and its position there, counting from 1) instead of
// its place in a read batch. r must be the reader the failed call read,
// stopped at the batch that failed.
func inInput(err error, r *parquetfile.Reader) error {
	var ro *partition.RowOutsideError
	if err == nil || r == nil || !errors.As(err, &ro) {
		return err
	}
	file, row := r.Position(ro.Row)
	where := fmt.Sprintf("partition: row %d of %s (counting from 1) has %s, outside key %s", row+1, file, ro.Value, ro.Key)
	return &reworded{msg: strings.Replace(err.Error(), ro.Error(), where, 1), err: err}
}

// reworded is err with another message; errors.Is and As see err.
type reworded struct {
	msg string
	err error
}

func (r *reworded) Error() string { return r.msg }
func (r *reworded) Unwrap() error { return r.err }

// keyColumns returns a parquetfile.WithConstant for every top-level source
// column of an identity partition field of key's spec, holding the key's
// value. Values that have no Arrow scalar here (decimal, uuid) are left
// out: the replace then reports the missing column.
func keyColumns(tbl *icetable.Table, key partition.Key) ([]parquetfile.Option, error) {
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return nil, err
	}
	vals, err := spec.Values(key)
	if err != nil {
		return nil, err
	}
	var opts []parquetfile.Option
	ps := tbl.Spec()
	for _, pf := range ps.Fields() {
		if _, ok := pf.Transform.(iceberg.IdentityTransform); !ok {
			continue
		}
		src, ok := tbl.Schema().FindFieldByID(pf.SourceID())
		if !ok {
			continue
		}
		if name, _ := tbl.Schema().FindColumnName(src.ID); name != src.Name {
			continue // nested
		}
		dt, err := icetable.TypeToArrowType(src.Type, false, false)
		if err != nil {
			continue
		}
		sc, ok := arrowScalar(vals[pf.FieldID], dt)
		if !ok {
			continue
		}
		opts = append(opts, parquetfile.WithConstant(arrow.Field{Name: src.Name, Type: dt, Nullable: !src.Required}, sc))
	}
	return opts, nil
}

// arrowScalar converts a key value (iceberg-go's Go form) to a scalar of dt.
func arrowScalar(v any, dt arrow.DataType) (scalar.Scalar, bool) {
	switch v := v.(type) {
	case iceberg.Date:
		return scalar.NewDate32Scalar(arrow.Date32(v)), dt.ID() == arrow.DATE32
	case iceberg.Timestamp:
		ts, ok := dt.(*arrow.TimestampType)
		return scalar.NewTimestampScalar(arrow.Timestamp(v), ts), ok && ts.Unit == arrow.Microsecond
	case iceberg.Time:
		tt, ok := dt.(*arrow.Time64Type)
		return scalar.NewTime64Scalar(arrow.Time64(v), tt), ok && tt.Unit == arrow.Microsecond
	case bool, int32, int64, float32, float64, string, []byte:
		sc, err := scalar.MakeScalarParam(v, dt)
		return sc, err == nil && arrow.TypeEqual(sc.DataType(), dt)
	}
	return nil, false
}
