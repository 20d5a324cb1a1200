//go:build interop

package interop

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// Project keeps the columns cols of every row.
func Project(rows []Row, cols ...string) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		p := make(Row, len(cols))
		for _, c := range cols {
			p[c] = r[c]
		}
		out[i] = p
	}
	return out
}

// Encode returns the typed value of row i of arr, as engines.py writes it.
func Encode(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return "null"
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return "b:" + strconv.FormatBool(a.Value(i))
	case *array.Int8:
		return "i:" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return "i:" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return "i:" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return "i:" + strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		return Float(float64(a.Value(i)))
	case *array.Float64:
		return Float(a.Value(i))
	case *array.Decimal128:
		return "d:" + a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.String:
		return "s:" + a.Value(i)
	case *array.LargeString:
		return "s:" + a.Value(i)
	case *extensions.UUIDArray:
		return "s:" + a.Value(i).String() // as Spark reads a uuid
	case *array.Binary:
		return "x:" + base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return "x:" + base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.FixedSizeBinary:
		return "x:" + base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.Date32:
		return "date:" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Time64:
		return "time:" + strconv.FormatInt(micros(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit), 10)
	case *array.Timestamp:
		return "ts:" + strconv.FormatInt(micros(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit), 10)
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := make(map[string]any, a.NumField())
		for f := range a.NumField() {
			m[st.Field(f).Name] = Encode(a.Field(f), i)
		}
		return m
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, Encode(a.ListValues(), int(j)))
		}
		return out
	}
	panic(fmt.Sprintf("interop: no encoding for %s", arr.DataType()))
}

// Float is the typed value of a float: its bits, so that -0.0 and +0.0
// differ; every NaN is "f:NaN".
func Float(f float64) string {
	if math.IsNaN(f) {
		return "f:NaN"
	}
	return fmt.Sprintf("f:%016x", math.Float64bits(f))
}

func micros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1e6
	case arrow.Millisecond:
		return v * 1e3
	case arrow.Nanosecond:
		return v / 1e3
	}
	return v
}

// RowsOf encodes every row of the records, columns named as in the
// records' schema.
func RowsOf(recs ...arrow.RecordBatch) []Row {
	var out []Row
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			r := make(Row, rec.NumCols())
			for c, col := range rec.Columns() {
				r[rec.ColumnName(c)] = Encode(col, i)
			}
			out = append(out, r)
		}
	}
	return out
}

// SameRows fails the test unless got and want hold the same rows, each as
// often (order does not matter). what names the comparison in the message,
// which lists the first missing and unexpected rows.
func SameRows(t testing.TB, what string, want, got []Row) {
	t.Helper()
	if d := Diff(want, got); d != "" {
		t.Errorf("%s: %d rows, want %d:\n%s", what, len(got), len(want), d)
	}
}

// Diff describes how the multisets of rows got and want differ, "" when
// they do not.
func Diff(want, got []Row) string {
	count := map[string]int{}
	for _, r := range want {
		count[r.Canon()]++
	}
	for _, r := range got {
		count[r.Canon()]--
	}
	var missing, extra []string
	for k, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	slices.Sort(missing)
	slices.Sort(extra)
	var b strings.Builder
	list := func(label string, rows []string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "  %d %s, e.g.:\n", len(rows), label)
		for _, r := range rows[:min(len(rows), 5)] {
			fmt.Fprintf(&b, "    %.400s\n", r)
		}
	}
	list("missing", missing)
	list("unexpected", extra)
	return b.String()
}
