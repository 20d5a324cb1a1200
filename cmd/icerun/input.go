package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
)

// openInput opens the Parquet files of paths as the rows of key. An
// identity partition column that the files lack (Hive-style input, where
// the folder names it) is filled from the key and reported on stderr.
func (e *env) openInput(ctx context.Context, tbl *icetable.Table, key partition.Key, paths []string) (*parquetfile.Reader, error) {
	opts, err := keyColumns(tbl, key)
	if err != nil {
		return nil, err
	}
	r, err := parquetfile.Open(ctx, paths, opts...)
	if err != nil {
		return nil, err
	}
	if added := r.Added(); len(added) > 0 {
		fmt.Fprintf(e.err, "%s: filled %s from the key (the input files lack %s)\n", key, strings.Join(added, ", "), plural(len(added), "it", "them"))
	}
	return r, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

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
