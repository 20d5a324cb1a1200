package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// Contract is what a producer promises to send: the expected input columns,
// their types and which are required. It is checked at the boundary, before
// rows are resolved to the table, so that a producer that breaks its promise
// is caught by name even when the table itself would accept the rows (a
// column the table holds as optional but the pipeline needs).
//
// Unknown input fields follow Unknown; the zero value ignores them.
type Contract struct {
	Columns []Column
	Unknown UnknownPolicy
}

// Column is one column of a [Contract]. Type uses the Iceberg promotion
// rules: an int input satisfies a long column, never the reverse.
type Column struct {
	Name     string
	Type     iceberg.Type
	Required bool
}

// ContractCheck is a compiled [Contract] for one input schema. It is
// immutable and safe for concurrent use.
type ContractCheck struct {
	plain *arrow.Schema // the input schema without field IDs
	res   *Resolution
}

// Check compiles the contract against the input schema. It fails with
// [ErrMissingRequired] when a required column is missing,
// [ErrIncompatibleType] when a column's type cannot be promoted to the
// contract's, and [ErrUnknownField] for unknown fields under RejectUnknown.
func (c Contract) Check(in *arrow.Schema) (*ContractCheck, error) {
	if len(c.Columns) == 0 {
		return nil, errors.New("schema: contract: no columns")
	}
	fields := make([]iceberg.NestedField, len(c.Columns))
	for i, col := range c.Columns {
		if col.Name == "" || col.Type == nil {
			return nil, fmt.Errorf("schema: contract: column %d: empty name or nil type", i)
		}
		fields[i] = iceberg.NestedField{ID: i + 1, Name: col.Name, Type: col.Type, Required: col.Required}
	}
	// Resolve by name only: contract columns carry no table field IDs.
	plain := withoutIDs(in)
	res, err := Resolve(plain, iceberg.NewSchema(0, fields...), nil, c.Unknown)
	if err != nil {
		return nil, fmt.Errorf("contract violated: %w", err)
	}
	return &ContractCheck{plain: plain, res: res}, nil
}

// Ignored lists the input fields the contract does not name.
func (cc *ContractCheck) Ignored() []string { return cc.res.Ignored() }

// CheckBatch fails with [ErrMissingRequired] when rec holds a null in a
// required contract column, naming the column and the first row.
func (cc *ContractCheck) CheckBatch(ctx context.Context, rec arrow.RecordBatch) error {
	view := array.NewRecordBatch(cc.plain, rec.Columns(), rec.NumRows())
	defer view.Release()
	out, err := cc.res.Apply(ctx, view)
	if err != nil {
		return fmt.Errorf("contract violated: %w", err)
	}
	out.Release()
	return nil
}

// withoutIDs is in with top-level field metadata dropped.
func withoutIDs(in *arrow.Schema) *arrow.Schema {
	plain := make([]arrow.Field, in.NumFields())
	for i, f := range in.Fields() {
		plain[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return arrow.NewSchema(plain, nil)
}

// Describe is the contract in one line, for messages.
func (c Contract) Describe() string {
	parts := make([]string, len(c.Columns))
	for i, col := range c.Columns {
		req := "optional"
		if col.Required {
			req = "required"
		}
		parts[i] = fmt.Sprintf("%s %s %s", col.Name, col.Type, req)
	}
	return strings.Join(parts, ", ")
}
