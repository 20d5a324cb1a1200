package partition

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/iceberg-go"
)

// Matcher checks Arrow rows against one key. It is built once per key and
// batch schema by [Spec.Matcher] and tests raw column values in tight loops.
// It is immutable and safe for concurrent use.
type Matcher struct {
	key    Key
	fields []fieldMatcher
}

type fieldMatcher struct {
	f    *field
	path []int          // source column; nil for void fields
	typ  arrow.DataType // its Arrow type in the Matcher's schema
	k    kernel
}

// Matcher returns a Matcher of key k for record batches of schema in, laid
// out as iceberg-go's table.SchemaToArrowSchema(tableSchema, nil, true, false)
// produces it: each source column is found by its "PARQUET:field_id"
// metadata, at the top level or inside structs. It returns an error wrapping
// [ErrWrongSpec] when k belongs to another spec.
func (s *Spec) Matcher(k Key, in *arrow.Schema) (*Matcher, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	vals, err := s.parse(k.text)
	if err != nil {
		return nil, err
	}
	paths := columnPaths(in)
	m := &Matcher{key: k}
	for i := range s.fields {
		f := &s.fields[i]
		if f.tk == transformVoid {
			continue
		}
		path, ok := paths[f.sourceID]
		if !ok {
			return nil, fmt.Errorf("partition: field %s: source column %s (id %d) not in Arrow schema", f.name, f.source, f.sourceID)
		}
		typ := fieldAt(in, path).Type
		if !arrowFits(f.srcType, typ) {
			return nil, fmt.Errorf("partition: field %s: source column %s is Arrow %s, want the Arrow form of %s", f.name, f.source, typ, f.srcType)
		}
		m.fields = append(m.fields, fieldMatcher{f: f, path: path, typ: typ, k: f.kernel(vals[i])})
	}

	return m, nil
}

// arrowFits reports whether Arrow type dt is how SchemaToArrowSchema writes
// Iceberg type src (large string and binary also allowed).
func arrowFits(src iceberg.Type, dt arrow.DataType) bool {
	switch t := src.(type) {
	case iceberg.BooleanType:
		return dt.ID() == arrow.BOOL
	case iceberg.Int32Type:
		return dt.ID() == arrow.INT32
	case iceberg.Int64Type:
		return dt.ID() == arrow.INT64
	case iceberg.Float32Type:
		return dt.ID() == arrow.FLOAT32
	case iceberg.Float64Type:
		return dt.ID() == arrow.FLOAT64
	case iceberg.DecimalType:
		d, ok := dt.(*arrow.Decimal128Type)

		return ok && int(d.Scale) == t.Scale()
	case iceberg.DateType:
		return dt.ID() == arrow.DATE32
	case iceberg.TimeType:
		d, ok := dt.(*arrow.Time64Type)

		return ok && d.Unit == arrow.Microsecond
	case iceberg.TimestampType, iceberg.TimestampTzType:
		d, ok := dt.(*arrow.TimestampType)

		return ok && d.Unit == arrow.Microsecond
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		d, ok := dt.(*arrow.TimestampType)

		return ok && d.Unit == arrow.Nanosecond
	case iceberg.StringType:
		return dt.ID() == arrow.STRING || dt.ID() == arrow.LARGE_STRING
	case iceberg.BinaryType:
		return dt.ID() == arrow.BINARY || dt.ID() == arrow.LARGE_BINARY
	case iceberg.FixedType:
		d, ok := dt.(*arrow.FixedSizeBinaryType)

		return ok && d.ByteWidth == t.Len()
	case iceberg.UUIDType:
		_, ok := dt.(*extensions.UUIDType)

		return ok
	}

	return false
}

// Check returns nil when every row of rec is in the key. Otherwise it
// returns an error wrapping [ErrRowOutside] that names the first offending
// row, the first partition field it differs in and that row's value, e.g.
//
//	partition: row 17 has event_date=2026-07-15, outside key event_date=2026-07-14
//
// A decimal beyond its source column's precision fails with an error
// wrapping [ErrBadValue]; no input makes Check panic.
func (m *Matcher) Check(rec arrow.RecordBatch) (err error) {
	defer recoverValue("check", &err)
	row, field := -1, -1
	for j := range m.fields {
		fm := &m.fields[j]
		col, n, err := fm.column(rec)
		if err != nil {
			return err
		}
		if err := fm.f.checkSource(col, n); err != nil {
			return err
		}
		if r := fm.k.next(col, n, 0); r >= 0 && (row < 0 || r < row) {
			row, field = r, j
		}
	}
	if row < 0 {
		return nil
	}
	fm := &m.fields[field]
	col, n, _ := fm.column(rec)
	v := fm.f.apply(sourceValue(col, n, row, fm.f.srcType))

	return &RowOutsideError{Row: row, Value: fm.f.text(v), Key: m.key.text}
}

// Mask returns, for every row of rec, whether it is in the key. Like
// [Matcher.Check], it fails with [ErrBadValue] on a decimal beyond its
// precision, and never panics.
func (m *Matcher) Mask(rec arrow.RecordBatch) (_ []bool, err error) {
	defer recoverValue("mask", &err)
	out := make([]bool, rec.NumRows())
	for i := range out {
		out[i] = true
	}
	for j := range m.fields {
		fm := &m.fields[j]
		col, n, err := fm.column(rec)
		if err != nil {
			return nil, err
		}
		if err := fm.f.checkSource(col, n); err != nil {
			return nil, err
		}
		for r := fm.k.next(col, n, 0); r >= 0; r = fm.k.next(col, n, r+1) {
			out[r] = false
		}
	}

	return out, nil
}

// column returns the field's source column of rec, checking its type.
func (fm *fieldMatcher) column(rec arrow.RecordBatch) (arrow.Array, nulls, error) {
	col, n, err := column(rec, fm.path)
	if err != nil {
		return nil, nulls{}, fmt.Errorf("partition: field %s: %w", fm.f.name, err)
	}
	if !arrow.TypeEqual(col.DataType(), fm.typ) {
		return nil, nulls{}, fmt.Errorf("partition: field %s: column %s is Arrow %s, want %s", fm.f.name, fm.f.source, col.DataType(), fm.typ)
	}

	return col, n, nil
}
