package table

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// keyRange holds the values of the first key column of a change, to skip
// the data files whose bounds on that column (the lower and upper bounds
// their manifest entry records) hold none of them: no row of such a file
// can have a key of the change. Integer, date, time and timestamp columns
// (ints) and string columns (strs) prune; any other type, or a null
// value, turns pruning off.
type keyRange struct {
	column string
	off    bool
	ints   []int64
	strs   []string
	sorted bool
	// narrow: the column is an int, long or date, whose files may hold
	// 4-byte bounds (an int promoted to long); 8-byte ones otherwise.
	narrow bool
}

func newKeyRange(keyColumns []string) *keyRange {
	return &keyRange{column: keyColumns[0]}
}

// add records the first key column's values of rec, a batch resolved to
// the table's types.
func (r *keyRange) add(rec arrow.RecordBatch) {
	if r.off {
		return
	}
	idx := rec.Schema().FieldIndices(r.column)
	if len(idx) != 1 || rec.Column(idx[0]).NullN() > 0 {
		r.off = true
		return
	}
	r.sorted = false
	r.narrow = false
	switch a := rec.Column(idx[0]).(type) {
	case *array.Int32:
		r.narrow = true
		for _, v := range a.Int32Values() {
			r.ints = append(r.ints, int64(v))
		}
	case *array.Int64:
		r.narrow = true
		r.ints = append(r.ints, a.Int64Values()...)
	case *array.Date32:
		r.narrow = true
		for _, v := range a.Date32Values() {
			r.ints = append(r.ints, int64(v))
		}
	case *array.Time64:
		for _, v := range a.Time64Values() {
			r.ints = append(r.ints, int64(v))
		}
	case *array.Timestamp:
		for _, v := range a.TimestampValues() {
			r.ints = append(r.ints, int64(v))
		}
	case *array.String:
		for i := range a.Len() {
			r.strs = append(r.strs, strings.Clone(a.Value(i)))
		}
	default:
		r.off = true
	}
}

// prunes reports whether r can skip files at all.
func (r *keyRange) prunes() bool {
	return r != nil && !r.off && (len(r.ints) > 0 || len(r.strs) > 0)
}

// mayHold reports whether data file f may hold a row whose first key
// column (field id) has one of r's values, by f's bounds. A file without
// both bounds of the column, or with bounds r cannot read, may.
func (r *keyRange) mayHold(f iceberg.DataFile, id int) bool {
	if !r.prunes() {
		return true
	}
	lo, ok1 := f.LowerBoundValues()[id]
	hi, ok2 := f.UpperBoundValues()[id]
	if !ok1 || !ok2 {
		return true
	}
	if !r.sorted {
		slices.Sort(r.ints)
		r.ints = slices.Compact(r.ints)
		slices.Sort(r.strs)
		r.strs = slices.Compact(r.strs)
		r.sorted = true
	}
	if len(r.strs) > 0 {
		// Bounds are UTF-8 bytes; a truncated lower bound is a prefix (not
		// above the values), a truncated upper bound is rounded up.
		i, _ := slices.BinarySearch(r.strs, string(lo))
		return i < len(r.strs) && r.strs[i] <= string(hi)
	}
	l, ok1 := littleEndianInt(lo, r.narrow)
	h, ok2 := littleEndianInt(hi, r.narrow)
	if !ok1 || !ok2 {
		return true
	}
	i, _ := slices.BinarySearch(r.ints, l)
	return i < len(r.ints) && r.ints[i] <= h
}

// littleEndianInt reads an int, date (4 bytes, only when narrow), long,
// time or timestamp (8 bytes) bound in Iceberg's single-value
// serialization.
func littleEndianInt(b []byte, narrow bool) (int64, bool) {
	switch {
	case len(b) == 4 && narrow:
		return int64(int32(binary.LittleEndian.Uint32(b))), true
	case len(b) == 8:
		return int64(binary.LittleEndian.Uint64(b)), true
	}
	return 0, false
}
