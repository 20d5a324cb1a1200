package schema

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// firstNull looks in arr, an output array built for nd, for a null in a
// required column at indexes [lo, hi) whose parent is valid. valid reports
// whether the parent of index i is valid (nil: always); row maps an index of
// arr to a row of the batch (nil: identity). It returns the column path and
// the batch row of the first such null in that column.
//
// Arrays without nulls cost one null count each; rows are scanned only
// where a required column holds nulls.
func firstNull(nd *node, arr arrow.Array, lo, hi int, valid func(int) bool, row func(int) int) (string, int, bool) {
	if !nd.check || lo >= hi {
		return "", 0, false
	}
	if row == nil {
		row = func(i int) int { return i }
	}
	if nd.required && arr.NullN() > 0 {
		for i := lo; i < hi; i++ {
			if arr.IsNull(i) && (valid == nil || valid(i)) {
				return nd.path, row(i), true
			}
		}
	}

	switch nd.op {
	case opStruct:
		st := arr.(*array.Struct)
		v := func(i int) bool { return st.IsValid(i) && (valid == nil || valid(i)) }
		for k := range nd.children {
			if path, r, ok := firstNull(&nd.children[k], st.Field(k), lo, hi, v, row); ok {
				return path, r, true
			}
		}
	case opList, opLargeList, opMap:
		ll := arr.(array.ListLike)
		// slot returns the list index in [lo, hi) holding value index j.
		slot := func(j int) int {
			return lo + sort.Search(hi-lo, func(i int) bool {
				_, end := ll.ValueOffsets(lo + i)
				return int(end) > j
			})
		}
		v := func(j int) bool { i := slot(j); return ll.IsValid(i) && (valid == nil || valid(i)) }
		r := func(j int) int { return row(slot(j)) }
		start, _ := ll.ValueOffsets(lo)
		_, end := ll.ValueOffsets(hi - 1)
		return firstNull(&nd.children[0], ll.ListValues(), int(start), int(end), v, r)
	}
	return "", 0, false
}
