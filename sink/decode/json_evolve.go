package decode

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/sink"
)

// jsonNewFields collects the fields of the messages the schema lacks and
// the type a column for them takes, merged over the messages of a poll:
// top-level fields, and fields inside the values of the columns holding
// structs (the new part of their type, see newInside).
type jsonNewFields struct {
	known   map[string]bool
	structs map[string]arrow.DataType // the columns holding structs
	types   map[string]iceberg.Type
	order   []string
}

// add notes the unknown fields of obj (a JSON object).
func (n *jsonNewFields) add(obj []byte) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(obj, &fields) != nil {
		return
	}
	var names []string // the fields that may be new, sorted
	for name := range fields {
		if _, nested := n.structs[name]; nested || !n.known[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		v := fields[name]
		var t iceberg.Type
		switch col, ok := n.structs[name]; {
		case ok:
			t = newInside(inferJSON(v), col)
		case name == "" || strings.Contains(name, "."):
			continue // a name no column can take as it is
		default:
			t = inferJSON(v)
		}
		if t == nil {
			continue // null alone: wait for a value
		}
		was, seen := n.types[name]
		if !seen {
			n.order = append(n.order, name)
		}
		n.types[name] = mergeTypes(was, t)
	}
}

// columns are the new columns, in the order their fields were first
// seen (sorted within one message).
func (n *jsonNewFields) columns() []sink.Column {
	var out []sink.Column
	for _, name := range n.order {
		out = append(out, sink.Column{Name: name, Type: n.types[name]})
	}
	return out
}

// inferJSON is the column type of a JSON value: an integral number long,
// another number double, text string, true or false boolean, an object a
// struct of its fields, an array a list of its elements' type; nil for
// null (and an object or array holding nothing but nulls).
func inferJSON(v json.RawMessage) iceberg.Type {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"':
		return iceberg.PrimitiveTypes.String
	case 't', 'f':
		return iceberg.PrimitiveTypes.Bool
	case 'n':
		return nil
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return nil
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			names = append(names, name)
		}
		slices.Sort(names)
		st := &iceberg.StructType{}
		for i, name := range names {
			if t := inferJSON(obj[name]); t != nil {
				st.FieldList = append(st.FieldList, iceberg.NestedField{ID: i + 1, Name: name, Type: t})
			}
		}
		if len(st.FieldList) == 0 {
			return nil
		}
		return st
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return nil
		}
		var elem iceberg.Type
		for _, it := range items {
			if t := inferJSON(it); t != nil {
				elem = mergeTypes(elem, t)
			}
		}
		if elem == nil {
			return nil
		}
		return &iceberg.ListType{ElementID: 1, Element: elem}
	}
	var n json.Number
	if json.Unmarshal(v, &n) != nil {
		return nil
	}
	if _, err := n.Int64(); err == nil {
		return iceberg.PrimitiveTypes.Int64
	}
	return iceberg.PrimitiveTypes.Float64
}

// mergeTypes is the type taking values of a and b: long and double make
// double, structs the union of their fields, lists their merged element;
// otherwise a (the first seen) wins, and the values of b are rejected.
func mergeTypes(a, b iceberg.Type) iceberg.Type {
	if a == nil {
		return b
	}
	switch at := a.(type) {
	case *iceberg.StructType:
		bt, ok := b.(*iceberg.StructType)
		if !ok {
			return a
		}
		out := &iceberg.StructType{FieldList: slices.Clone(at.FieldList)}
		for _, f := range bt.FieldList {
			i := slices.IndexFunc(out.FieldList, func(g iceberg.NestedField) bool { return g.Name == f.Name })
			if i < 0 {
				f.ID = len(out.FieldList) + 1000
				out.FieldList = append(out.FieldList, f)
				continue
			}
			out.FieldList[i].Type = mergeTypes(out.FieldList[i].Type, f.Type)
		}
		return out
	case *iceberg.ListType:
		bt, ok := b.(*iceberg.ListType)
		if !ok {
			return a
		}
		return &iceberg.ListType{ElementID: at.ElementID, Element: mergeTypes(at.Element, bt.Element)}
	}
	if a.Equals(iceberg.PrimitiveTypes.Int64) && b.Equals(iceberg.PrimitiveTypes.Float64) {
		return b
	}
	return a
}
