package parquetfile

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
)

// ErrHiveValue: a Hive folder value that [WithHiveColumns] fills a column
// from is missing for a file or does not parse as the column's type.
var ErrHiveValue = errors.New("parquetfile: Hive folder value")

// HiveNull is the folder value Hive, Spark and DuckDB write for a null.
const HiveNull = "__HIVE_DEFAULT_PARTITION__"

// WithHiveColumns adds each field that the files lack as a column holding,
// in the rows of every file, the value its folders name (col=value between
// the opened folder and the file, see [File].Hive), parsed as the field's
// type ([HiveNull] is a null). A file whose folders do not name the column,
// or name a value that does not parse, fails [Open] with [ErrHiveValue].
// A field the files have is left to the files. Fields also given to
// [WithConstant] are filled by the constant.
func WithHiveColumns(fields ...arrow.Field) Option {
	return func(c *config) error {
		c.hive = append(c.hive, fields...)
		return nil
	}
}

// hiveColumn is a column filled per file from its folders.
type hiveColumn struct {
	field  arrow.Field
	values []scalar.Scalar // by file index
}

// hiveColumns resolves the [WithHiveColumns] fields the files lack.
func hiveColumns(fields []arrow.Field, files []File, has func(string) bool) ([]hiveColumn, error) {
	var out []hiveColumn
	for _, f := range fields {
		if has(f.Name) {
			continue
		}
		hc := hiveColumn{field: f, values: make([]scalar.Scalar, len(files))}
		for i, file := range files {
			text, ok := file.Hive[f.Name]
			if !ok {
				return nil, fmt.Errorf("%w: %s: no %s=... folder above it, and the file has no column %s", ErrHiveValue, file.Path, f.Name, f.Name)
			}
			v, err := parseHive(f, text)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: folder %s=%s: %v", ErrHiveValue, file.Path, f.Name, text, err)
			}
			hc.values[i] = v
		}
		out = append(out, hc)
	}
	return out, nil
}

// parseHive parses a folder value as f's type.
func parseHive(f arrow.Field, text string) (scalar.Scalar, error) {
	if text == HiveNull {
		if !f.Nullable {
			return nil, fmt.Errorf("a null (%s) for a required column", HiveNull)
		}
		return scalar.MakeNullScalar(f.Type), nil
	}
	v, err := scalar.ParseScalar(f.Type, text)
	if err != nil {
		return nil, fmt.Errorf("not a %s", f.Type)
	}
	return v, nil
}

// FolderColumns returns the columns the folders of files name, in the
// order of the first file's folders, with the type their values have in
// every file: int64, date (YYYY-MM-DD), timestamp (YYYY-MM-DD
// HH:MM:SS[.ffffff]), or else string; as DuckDB's and Spark's Hive partition
// discovery infer them. A column some file's folders lack is left out.
func FolderColumns(files []File) []arrow.Field {
	if len(files) == 0 {
		return nil
	}
	var out []arrow.Field
	for _, name := range files[0].HiveNames {
		kinds := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond}}
		all := true
		for _, f := range files {
			v, ok := f.Hive[name]
			if !ok {
				all = false
				break
			}
			if v == HiveNull {
				continue
			}
			kinds = fitting(kinds, v)
		}
		if !all {
			continue
		}
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if len(kinds) > 0 {
			dt = kinds[0]
		}
		out = append(out, arrow.Field{Name: name, Type: dt, Nullable: true})
	}
	return out
}

// fitting keeps the types of kinds that text parses as.
func fitting(kinds []arrow.DataType, text string) []arrow.DataType {
	var out []arrow.DataType
	for _, dt := range kinds {
		if _, err := scalar.ParseScalar(dt, text); err == nil {
			out = append(out, dt)
		}
	}
	return out
}
