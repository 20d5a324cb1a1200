package sink

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// checkKeyColumns checks keyed mode's columns against tbl (named name):
// each a top-level column of a type [keyColumn] encodes, and together
// holding every partition field's source column, so that the key
// determines the table partition and the per-partition key sets hold
// every key exactly once.
func checkKeyColumns(tbl *icetable.Table, name string, columns []string) error {
	sch := tbl.Schema()
	for _, c := range columns {
		i := slices.IndexFunc(sch.Fields(), func(f iceberg.NestedField) bool { return f.Name == c })
		if i < 0 {
			if _, nested := sch.FindFieldByName(c); nested {
				return fmt.Errorf("%w: key column %q of table %s is nested: key columns are top-level columns", ErrBadOption, c, name)
			}
			return fmt.Errorf("%w: key column %q is not in table %s", ErrBadOption, c, name)
		}
		switch t := sch.Field(i).Type; t.(type) {
		case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType,
			iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType,
			iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		default:
			return fmt.Errorf("%w: key column %q of table %s is %s: a key column is a string, binary, fixed, int, long, date or timestamp column", ErrBadOption, c, name, t)
		}
	}
	spec := tbl.Spec()
	var missing, fields []string
	for _, f := range spec.Fields() {
		if _, void := f.Transform.(iceberg.VoidTransform); void {
			continue // always null: says nothing of the key
		}
		for _, id := range f.SourceIDs {
			src, ok := sch.FindColumnName(id)
			if !ok || slices.Contains(columns, src) || slices.Contains(missing, src) {
				continue
			}
			missing = append(missing, src)
			fields = append(fields, fmt.Sprintf("%s %s(%s)", f.Name, f.Transform, src))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: key (%s) of table %s lacks the partition source column(s) %s (partition field(s) %s): the key must determine the partition, or one key can land in two partitions; add them to the key",
			ErrBadOption, strings.Join(columns, ", "), name, strings.Join(missing, ", "), strings.Join(fields, ", "))
	}
	return nil
}

// keyColumn appends the value of row i of a key column (valid) to buf,
// after its tag.
type keyColumn func(buf []byte, i int) []byte

// The tags of a key column's value in an encoded key.
const (
	keyNull  = 0 // no value
	keyBytes = 1 // uvarint length, bytes
	keyInt   = 2 // 8 bytes, big-endian
)

// keyColumnOf returns the encoder of key column col of the rows (named
// column for errors). Variable-length values are length-prefixed and
// integers fixed-width, so that the concatenation of a row's values (see
// keyEncoder) is unambiguous.
func keyColumnOf(col arrow.Array, column string) (keyColumn, error) {
	str := func(buf []byte, s string) []byte {
		return append(binary.AppendUvarint(append(buf, keyBytes), uint64(len(s))), s...)
	}
	u64 := func(buf []byte, v int64) []byte { return binary.BigEndian.AppendUint64(append(buf, keyInt), uint64(v)) }
	switch a := col.(type) {
	case *array.String:
		return func(buf []byte, i int) []byte { return str(buf, a.Value(i)) }, nil
	case *array.LargeString:
		return func(buf []byte, i int) []byte { return str(buf, a.Value(i)) }, nil
	case *array.Binary:
		return func(buf []byte, i int) []byte { return str(buf, string(a.Value(i))) }, nil
	case *array.LargeBinary:
		return func(buf []byte, i int) []byte { return str(buf, string(a.Value(i))) }, nil
	case *array.FixedSizeBinary:
		return func(buf []byte, i int) []byte { return str(buf, string(a.Value(i))) }, nil
	case *array.Int32:
		return func(buf []byte, i int) []byte { return u64(buf, int64(a.Value(i))) }, nil
	case *array.Int64:
		return func(buf []byte, i int) []byte { return u64(buf, a.Value(i)) }, nil
	case *array.Date32:
		return func(buf []byte, i int) []byte { return u64(buf, int64(a.Value(i))) }, nil
	case *array.Timestamp:
		return func(buf []byte, i int) []byte { return u64(buf, int64(a.Value(i))) }, nil
	}
	return nil, fmt.Errorf("%w: key column %q is %s, not a string, binary, int, long, date or timestamp", ErrBadInput, column, col.DataType())
}

// encodeKeys encodes the key of every row of rec: for each key column a
// tag byte (keyNull, keyBytes, keyInt) and the value's encoding. valid[i] is
// false for a row whose key columns are all null: it has no key. The keys
// are substrings of one string (one allocation per record, not per key).
func encodeKeys(rec arrow.RecordBatch, columns []string) (keys []string, valid []bool, err error) {
	cols := make([]arrow.Array, len(columns))
	enc := make([]keyColumn, len(columns))
	for j, c := range columns {
		idx := rec.Schema().FieldIndices(c)
		if len(idx) != 1 {
			return nil, nil, fmt.Errorf("%w: key column %q not in the rows", ErrBadInput, c)
		}
		cols[j] = rec.Column(idx[0])
		if enc[j], err = keyColumnOf(cols[j], c); err != nil {
			return nil, nil, err
		}
	}
	n := int(rec.NumRows())
	var buf []byte
	ends := make([]int, n)
	valid = make([]bool, n)
	for i := range n {
		for j, col := range cols {
			if col.IsNull(i) {
				buf = append(buf, keyNull)
				continue
			}
			valid[i] = true
			buf = enc[j](buf, i)
		}
		ends[i] = len(buf)
	}
	all := string(buf)
	keys = make([]string, n)
	for i, start := 0, 0; i < n; i++ {
		keys[i], start = all[start:ends[i]], ends[i]
	}
	return keys, valid, nil
}

// keyText is key (of encodeKeys) for a person: column=value, joined by
// ", "; bytes quoted, integers in decimal (a date in days, a timestamp in
// its unit since the epoch).
func keyText(columns []string, key string) string {
	var parts []string
	for _, c := range columns {
		if key == "" {
			break
		}
		tag := key[0]
		key = key[1:]
		switch tag {
		case keyBytes:
			n, w := binary.Uvarint([]byte(key[:min(len(key), binary.MaxVarintLen64)]))
			if w <= 0 || uint64(len(key)-w) < n {
				return fmt.Sprintf("%q", key)
			}
			parts = append(parts, fmt.Sprintf("%s=%q", c, key[w:w+int(n)]))
			key = key[w+int(n):]
		case keyInt:
			if len(key) < 8 {
				return fmt.Sprintf("%q", key)
			}
			parts = append(parts, fmt.Sprintf("%s=%d", c, int64(binary.BigEndian.Uint64([]byte(key[:8])))))
			key = key[8:]
		default:
			parts = append(parts, c+"=null")
		}
	}
	return strings.Join(parts, ", ")
}
