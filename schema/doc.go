// Package schema resolves input Arrow batches onto a table's current Iceberg
// schema, so that icerun writes every value into the column it belongs to.
//
// # Basics
//
// [Resolve] compares one input Arrow schema with one table schema, once, and
// returns a [Resolution]. Each input field, at every depth, is matched to a
// table field:
//
//  1. by field ID, from the PARQUET:field_id metadata of the Arrow field;
//  2. else through the table's name mapping ([iceberg.NameMapping]), which
//     keeps the old names of renamed columns as aliases;
//  3. else by the current table column name.
//
// Never by position: two input columns of the same type in another order
// than the table's land in their own columns.
//
// Resolve checks types and required columns before any batch is read. Only
// lossless promotions pass (int to long, float to double, decimal precision
// up, string and binary to and from their large Arrow variants, timestamp
// units as iceberg-go's WriteRecords accepts); anything else fails with
// [ErrIncompatibleType]. A required table column without an input column
// fails with [ErrMissingRequired]. Input fields the table does not have are
// ignored and listed by [Resolution.Ignored], or rejected with
// [ErrUnknownField] under [RejectUnknown].
//
// [Resolution.Apply] then turns each batch into the layout of
// [Resolution.Schema], which is exactly what iceberg-go's
// table.SchemaToArrowSchema(tbl, nil, true, false) returns. Columns that
// already have the table's type are shared, not copied; promoted columns are
// converted; columns the input lacks get their write-default, or nulls; a null
// in a required column fails with [ErrMissingRequired] naming the first row.
//
// # Adding columns
//
// [Additions] is the diff of a schema change that adds columns: what
// columns given by name and Iceberg type add to a table schema (whole
// top-level columns, and the fields its struct columns lack at any
// depth). [Fits] is its rule for a column the table has: the new type
// must fit it as [Resolve] would accept the rows ([Promotable] on
// primitives: never long into double). table.Writer.AddColumns commits
// what Additions returns; the streaming sink adds columns through it.
//
// # Caveats
//
// A column the input lacks gets its Iceberg write-default (format version
// 3) in every row; without one, a missing optional column is null and a
// missing required column is an error. An input column of Arrow type null
// is supplied nulls, not a missing column. Structs,
// lists and maps resolve their children by ID at any depth; a list element or
// map key or value that carries a field ID must carry the table's.
// A dictionary-encoded input column is decoded to its values, which then
// resolve as a column of its value type would (a dictionary of strings
// into a string column, of int16 into a long column); view-layout inputs
// (string and binary views) are rejected as incompatible.
package schema
