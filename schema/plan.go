package schema

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/apache/iceberg-go"
)

// op says how Apply builds one output array from its input array.
type op uint8

const (
	opNull          op = iota // no input: all nulls of the output type
	opSame                    // types equal: reuse the input array
	opRetype                  // same buffers, output type (wider decimal, time zone alias)
	opWrap                    // fixed[16] storage wrapped as the uuid extension
	opCast                    // arrow compute cast (a lossless promotion)
	opNanosToMicros           // nanosecond timestamps of whole microseconds to microseconds
	opWidenDecimal            // decimal32 or decimal64 values widened to decimal128
	opStruct                  // children resolved field by field
	opList                    // list: element resolved
	opLargeList               // large list: offsets narrowed, element resolved
	opMap                     // map: entries struct (key, value) resolved
	opDefault                 // no input: the column's write-default in every row
)

// node is the plan for one output array. The plan is built once by Resolve
// and never changes, which makes a Resolution safe for concurrent use.
type node struct {
	path     string         // table column path, for messages
	out      arrow.DataType // output type, from the table schema
	op       op
	src      int           // index of the input field in its parent struct; -1 if missing
	required bool          // the output field is not nullable
	check    bool          // this node or one below is required: Apply looks for nulls
	prec     int32         // decimal output: its precision, which Apply checks values against; else 0
	bounded  bool          // this node or one below is a decimal: Apply checks precisions
	fill     scalar.Scalar // opDefault: the write-default
	decode   bool          // the input is dictionary-encoded: Apply decodes it to its values, then applies op
	children []node        // struct: output children in table order; list and map: the element
}

// resolver builds the plan and collects unmatched input paths.
type resolver struct {
	unknown []string
}

// fields resolves the input fields of one struct level onto the table
// fields of the same level. out holds the output fields, parallel to tbl;
// mapped holds the name mapping of this level (nil if none).
func (r *resolver) fields(tblPath, inPath string, in []arrow.Field, tbl []iceberg.NestedField,
	out []arrow.Field, mapped []iceberg.MappedField,
) ([]node, error) {
	src := make([]int, len(tbl))
	for k := range src {
		src[k] = -1
	}
	var unmatched []string // input names of this level that match no table field
	for i, f := range in {
		k, err := match(f, tbl, mapped)
		if err != nil {
			return nil, fmt.Errorf("schema: input field %q: %w", join(inPath, f.Name), err)
		}
		switch {
		case k < 0:
			r.unknown = append(r.unknown, join(inPath, f.Name))
			unmatched = append(unmatched, f.Name)
		case src[k] >= 0:
			return nil, fmt.Errorf("%w: input fields %q and %q both resolve to table column %q",
				ErrAmbiguousField, join(inPath, in[src[k]].Name), join(inPath, f.Name),
				join(tblPath, tbl[k].Name))
		default:
			src[k] = i
		}
	}

	nodes := make([]node, len(tbl))
	for k, t := range tbl {
		var inField *arrow.Field
		var inName string
		if src[k] >= 0 {
			inField, inName = &in[src[k]], in[src[k]].Name
		}
		n, err := r.field(join(tblPath, t.Name), join(inPath, inName), inField, t, out[k],
			mappedChildren(mapped, t.ID, t.Name))
		if err != nil {
			if inField == nil {
				err = suggest(err, t.Name, unmatched)
			}
			return nil, err
		}
		n.src = src[k]
		nodes[k] = n
	}
	return nodes, nil
}

// field resolves one input field (nil if none matched) onto table field t.
// mapped holds the name mapping of t's children.
func (r *resolver) field(tblPath, inPath string, in *arrow.Field, t iceberg.NestedField,
	out arrow.Field, mapped []iceberg.MappedField,
) (node, error) {
	n := node{path: tblPath, out: out.Type, src: -1, required: !out.Nullable}
	if in == nil {
		// Not supplied: the spec has the write-default written.
		fill, err := writeDefault(t, out.Type)
		if err != nil {
			return n, fmt.Errorf("%w: column %q: %v", ErrIncompatibleType, tblPath, err)
		}
		if fill != nil {
			n.op, n.fill = opDefault, fill
			return n, nil
		}
	}
	if in == nil || in.Type.ID() == arrow.NULL && out.Type.ID() != arrow.NULL {
		switch {
		case t.Required && in == nil:
			return n, fmt.Errorf("%w: column %q has no input column", ErrMissingRequired, tblPath)
		case t.Required:
			return n, fmt.Errorf("%w: column %q: input %q is of type null", ErrMissingRequired, tblPath, inPath)
		}
		n.op = opNull
		return n, nil
	}

	var err error
	switch tt := t.Type.(type) {
	case *iceberg.StructType:
		st, ok := in.Type.(*arrow.StructType)
		if !ok {
			return n, fmt.Errorf("%w: column %q: input %s, table %s", ErrIncompatibleType, tblPath, in.Type, t.Type)
		}
		n.op = opStruct
		n.children, err = r.fields(tblPath, inPath, st.Fields(), tt.FieldList,
			out.Type.(*arrow.StructType).Fields(), mapped)
	case *iceberg.ListType:
		n.op, n.children, err = r.list(tblPath, inPath, in.Type, tt, out.Type.(*arrow.ListType), mapped)
	case *iceberg.MapType:
		n.op, n.children, err = r.mapType(tblPath, inPath, in.Type, tt, out.Type.(*arrow.MapType), mapped)
	default:
		inType := in.Type
		if d, ok := inType.(*arrow.DictionaryType); ok {
			n.decode, inType = true, d.ValueType // a dictionary is its values
		}
		n.op, err = leaf(inType, t.Type, out.Type)
		if err != nil {
			return n, fmt.Errorf("%w: column %q: input %s, table %s: %v",
				ErrIncompatibleType, tblPath, in.Type, t.Type, err)
		}
	}
	if err != nil {
		return n, err
	}

	n.prec = decimalPrecision(out.Type)
	n.check, n.bounded = n.required, n.prec > 0
	for _, c := range n.children {
		n.check = n.check || c.check
		n.bounded = n.bounded || c.bounded
	}
	return n, nil
}

// list resolves a list's element.
func (r *resolver) list(tblPath, inPath string, in arrow.DataType, t *iceberg.ListType,
	out *arrow.ListType, mapped []iceberg.MappedField,
) (op, []node, error) {
	var o op
	var elem arrow.Field
	switch lt := in.(type) {
	case *arrow.ListType:
		o, elem = opList, lt.ElemField()
	case *arrow.LargeListType:
		o, elem = opLargeList, lt.ElemField()
	default:
		return 0, nil, fmt.Errorf("%w: column %q: input %s, table %s", ErrIncompatibleType, tblPath, in, t)
	}
	c, err := r.child(tblPath, inPath, "element", elem, t.ElementField(), out.ElemField(), mapped)
	return o, []node{c}, err
}

// mapType resolves a map's key and value, as the two children of its
// entries struct.
func (r *resolver) mapType(tblPath, inPath string, in arrow.DataType, t *iceberg.MapType,
	out *arrow.MapType, mapped []iceberg.MappedField,
) (op, []node, error) {
	mt, ok := in.(*arrow.MapType)
	if !ok {
		return 0, nil, fmt.Errorf("%w: column %q: input %s, table %s", ErrIncompatibleType, tblPath, in, t)
	}
	key, err := r.child(tblPath, inPath, "key", mt.KeyField(), t.KeyField(), out.KeyField(), mapped)
	if err != nil {
		return 0, nil, err
	}
	val, err := r.child(tblPath, inPath, "value", mt.ItemField(), t.ValueField(), out.ItemField(), mapped)
	if err != nil {
		return 0, nil, err
	}
	key.src, val.src = 0, 1
	entries := node{path: tblPath, out: out.Elem(), op: opStruct, src: 0,
		check: key.check || val.check, bounded: key.bounded || val.bounded, children: []node{key, val}}
	return opMap, []node{entries}, nil
}

// child resolves the element of a list, or the key or value of a map. There
// is exactly one candidate input field; if it carries a field ID, the ID must
// be the table's.
func (r *resolver) child(tblPath, inPath, name string, in arrow.Field, t iceberg.NestedField,
	out arrow.Field, mapped []iceberg.MappedField,
) (node, error) {
	tblPath, inPath = join(tblPath, name), join(inPath, name)
	id, ok, err := fieldID(in)
	if err != nil {
		return node{}, fmt.Errorf("schema: input field %q: %w", inPath, err)
	}
	if ok && id != t.ID {
		return node{}, fmt.Errorf("%w: column %q: input field id %d, table field id %d",
			ErrIncompatibleType, tblPath, id, t.ID)
	}
	return r.field(tblPath, inPath, &in, t, out, mappedChildren(mapped, t.ID, name))
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
