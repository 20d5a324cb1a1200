package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/sink"
)

// keyedTypes names the types keyedColumnType accepts, for messages.
const keyedTypes = "string, binary, fixed, uuid, int, long, date, timestamp or timestamptz"

// keyedColumnType reports whether keyed mode (-key) takes a key column of
// type t: a value that identifies a message as it is (no float, decimal
// or nested type).
func keyedColumnType(t iceberg.Type) bool {
	switch t.(type) {
	case iceberg.StringType, iceberg.BinaryType, iceberg.FixedType, iceberg.UUIDType,
		iceberg.Int32Type, iceberg.Int64Type, iceberg.DateType, iceberg.TimestampType, iceberg.TimestampTzType:
		return true
	}
	return false
}

// sinkKeyColumns parses -key, columns separated by commas, against the
// schema of table name: each is a top-level column of a type
// keyedColumnType takes. Its errors wrap sink.ErrBadOption (exit 64).
func sinkKeyColumns(key string, sch *iceberg.Schema, name string) ([]string, error) {
	var cols []string
	for _, col := range strings.Split(key, ",") {
		col = strings.TrimSpace(col)
		if col == "" {
			return nil, fmt.Errorf("%w: -key %q: an empty key column name", sink.ErrBadOption, key)
		}
		if slices.Contains(cols, col) {
			return nil, fmt.Errorf("%w: -key %q: key column %q is named twice", sink.ErrBadOption, key, col)
		}
		i := slices.IndexFunc(sch.Fields(), func(f iceberg.NestedField) bool { return f.Name == col })
		if i < 0 {
			var names []string
			for _, f := range sch.Fields() {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("%w: -key: key column %q is not a column of %s (its columns: %s)", sink.ErrBadOption, col, name, strings.Join(names, ", "))
		}
		if f := sch.Fields()[i]; !keyedColumnType(f.Type) {
			return nil, fmt.Errorf("%w: -key: key column %q of %s is %s; a key column is of type %s", sink.ErrBadOption, col, name, f.Type, keyedTypes)
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// keyOption is the sink option of keyed mode on cols. sink.WithKey takes
// one column.
func keyOption(cols []string) (sink.Option, error) {
	if len(cols) != 1 {
		return nil, fmt.Errorf("%w: -key %s: the sink's keyed mode takes one key column", sink.ErrBadOption, strings.Join(cols, ","))
	}
	return sink.WithKey(cols[0]), nil
}
