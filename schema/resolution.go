package schema

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Resolution maps one input Arrow schema onto one Iceberg table schema. It is
// computed once per schema pair by [Resolve] and applied to every batch of
// that input by [Resolution.Apply], which does no per-row work beyond the
// promotions and required-column checks the mapping asks for.
//
// A Resolution is immutable and safe for concurrent use.
type Resolution struct {
	in      *arrow.Schema
	out     *arrow.Schema
	cols    []node // one per output column, in table order
	ignored []string
}

// Resolve maps the input schema in onto the table schema tbl. Every input
// field, at every depth, is matched to a table field by its PARQUET:field_id
// metadata if it has one; otherwise through the name mapping nm (which
// carries the old names of renamed columns as aliases; nil skips this step);
// otherwise by the current table column name. Never by position.
//
// Resolve checks, before any batch is read, that every matched input type
// can be promoted to its table type (int to long, float to double, decimal
// precision up, string and binary to their large variants, timestamp units
// as iceberg-go's WriteRecords accepts), failing with [ErrIncompatibleType]
// otherwise, and that every required table column has an input column,
// failing with [ErrMissingRequired] otherwise. Input fields that match no
// table field are handled by policy.
func Resolve(in *arrow.Schema, tbl *iceberg.Schema, nm iceberg.NameMapping, policy UnknownPolicy) (*Resolution, error) {
	switch {
	case in == nil:
		return nil, errors.New("schema: resolve: nil input schema")
	case tbl == nil:
		return nil, errors.New("schema: resolve: nil table schema")
	case policy != IgnoreUnknown && policy != RejectUnknown:
		return nil, fmt.Errorf("schema: resolve: invalid policy %v", policy)
	}

	out, err := table.SchemaToArrowSchema(tbl, nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("schema: resolve: table schema to arrow: %w", err)
	}

	var r resolver
	cols, err := r.fields("", "", in.Fields(), tbl.Fields(), out.Fields(), nm)
	if err != nil {
		return nil, err
	}

	slices.Sort(r.unknown)
	if policy == RejectUnknown && len(r.unknown) > 0 {
		return nil, fmt.Errorf("%w: input fields %s match no table column",
			ErrUnknownField, quoteAll(r.unknown))
	}

	return &Resolution{in: in, out: out, cols: cols, ignored: r.unknown}, nil
}

// Schema returns the output schema of [Resolution.Apply]: exactly
// table.SchemaToArrowSchema(tbl, nil, true, false), with the columns in table
// order, each carrying its PARQUET:field_id.
func (r *Resolution) Schema() *arrow.Schema { return r.out }

// Ignored returns the sorted dotted paths of the input fields that matched no
// table field. Fields nested in an ignored field are not listed separately.
func (r *Resolution) Ignored() []string { return slices.Clone(r.ignored) }

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
