package schema

import (
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// valueRule is a check Apply makes on the values of its output arrays, at
// every depth: no null in a required column (requiredRule), no decimal
// beyond its precision (precisionRule).
type valueRule interface {
	// applies reports whether nd or a node below it can fail the rule.
	applies(nd *node) bool
	// first returns the first index in [lo, hi) of arr, an output array
	// built for nd, whose value fails the rule and whose parent is valid
	// (valid nil: always).
	first(nd *node, arr arrow.Array, lo, hi int, valid func(int) bool) (int, bool)
}

// firstFailing looks in arr, an output array built for nd, for a value at
// indexes [lo, hi) that fails rule and whose parent is valid. valid reports
// whether the parent of index i is valid (nil: always); row maps an index
// of arr to a row of the batch (nil: identity). It returns the node of the
// failing column and the batch row of the first such value in it.
func firstFailing(rule valueRule, nd *node, arr arrow.Array, lo, hi int, valid func(int) bool, row func(int) int) (*node, int, bool) {
	if !rule.applies(nd) || lo >= hi {
		return nil, 0, false
	}
	if row == nil {
		row = func(i int) int { return i }
	}
	if i, ok := rule.first(nd, arr, lo, hi, valid); ok {
		return nd, row(i), true
	}

	switch nd.op {
	case opStruct:
		st := arr.(*array.Struct)
		v := func(i int) bool { return st.IsValid(i) && (valid == nil || valid(i)) }
		for k := range nd.children {
			if c, r, ok := firstFailing(rule, &nd.children[k], st.Field(k), lo, hi, v, row); ok {
				return c, r, true
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
		return firstFailing(rule, &nd.children[0], ll.ListValues(), int(start), int(end), v, r)
	}
	return nil, 0, false
}

// requiredRule: a required column holds no null. Arrays without nulls
// cost one null count each; rows are scanned only where a required column
// holds nulls.
type requiredRule struct{}

func (requiredRule) applies(nd *node) bool { return nd.check }

func (requiredRule) first(nd *node, arr arrow.Array, lo, hi int, valid func(int) bool) (int, bool) {
	if !nd.required || arr.NullN() == 0 {
		return 0, false
	}
	for i := lo; i < hi; i++ {
		if arr.IsNull(i) && (valid == nil || valid(i)) {
			return i, true
		}
	}
	return 0, false
}
