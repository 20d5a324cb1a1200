package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

// Column is a column for [Sink.AddColumns]: an optional top-level column,
// or, when the table has a struct column of that name (or a list or map
// of structs), the fields of Type's structs that column lacks. The field
// ids inside Type are ignored (the table assigns them).
type Column struct {
	Name string
	Type iceberg.Type
}

var (
	// ErrColumnConflict is returned by [Sink.AddColumns] for a column the
	// table has with a type the new one does not fit; the error also
	// matches schema.ErrIncompatibleType, as a write of such values does.
	ErrColumnConflict = errors.New("sink: column exists with an incompatible type")
	// ErrSchemaChanged is returned by a commit whose rows were written for
	// a schema the table no longer has (another writer added a column):
	// nothing was committed; call [Sink.Start] and resume from the
	// positions it returns (the rows are written again, for the new
	// schema).
	ErrSchemaChanged = errors.New("sink: the table's schema changed under the pending rows")
)

// addColumnAttempts bounds the reload-and-retry loop of AddColumns when
// other writers change the table's metadata meanwhile.
const addColumnAttempts = 10

// AddColumns adds the columns the table lacks, each optional, and the
// fields a struct column (at any depth, also inside lists and maps) lacks
// where a column's type has them, each optional, in a schema change of its
// own committed after the pending rows (which do not need them): rows
// committed before read null in them. A column or field the table already
// has (another sink racing to add it) is accepted when the new type fits
// the existing one (the same type, a promotion schema.Resolve applies to
// the rows: int into long, float into double, decimal precision up; a
// struct, list or map whose fields fit), else it fails with
// [ErrColumnConflict], also matching schema.ErrIncompatibleType as the
// rows would, and changes nothing. A lost race with another
// commit is retried on the reloaded table. The change is recorded in the
// table property icerun.schema-change.<schema id>, as
// table.Writer.AddColumn does.
func (s *Sink) AddColumns(ctx context.Context, cols ...Column) error {
	if s.closed {
		return ErrClosed
	}
	if _, err := s.Commit(ctx); err != nil {
		return err
	}
	var last error
	for range addColumnAttempts {
		tbl, err := snapshotcommit.Load(ctx, s.cat, s.ident)
		if err != nil {
			return fmt.Errorf("sink: %s: add columns: %w", s.name, err)
		}
		missing, err := columnsToAdd(tbl.Schema(), cols)
		if err != nil {
			return fmt.Errorf("sink: %s: %w", s.name, err)
		}
		if len(missing) == 0 {
			s.cfg.log.Info("sink schema change: the table has the columns", slog.String("table", s.name), slog.Int("schema", tbl.Schema().ID))
			return s.adopt(tbl)
		}
		txn := tbl.NewTransaction()
		upd := txn.UpdateSchema(true, false)
		note := "add column"
		for _, a := range missing {
			next := 0
			upd.AddColumn(a.path, renumber(a.typ, &next), "", false, nil)
			note += fmt.Sprintf(" %s %s", strings.Join(a.path, "."), a.typ)
		}
		if err := upd.Commit(); err != nil {
			return fmt.Errorf("sink: %s: %w: %w", s.name, table.ErrSchemaChange, err)
		}
		staged, err := txn.StagedTable()
		if err != nil {
			return fmt.Errorf("sink: %s: add columns: %w", s.name, err)
		}
		note += fmt.Sprintf(" by the sink, code version %s, run %s", s.cfg.codeVersion, s.cfg.runID)
		if err := txn.SetProperties(iceberg.Properties{table.SchemaChangePrefix + strconv.Itoa(staged.Schema().ID): note}); err != nil {
			return fmt.Errorf("sink: %s: add columns: %w", s.name, err)
		}
		committed, err := txn.Commit(ctx)
		if err == nil {
			s.cfg.log.Info("sink schema change", slog.String("table", s.name), slog.String("change", note), slog.Int("schema", committed.Schema().ID))
			return s.adopt(committed)
		}
		last = err // another writer moved the table: reload and decide again
	}
	return fmt.Errorf("sink: %s: add columns: %w", s.name, last)
}

// adopt makes tbl (a newer schema of the table) the one rows are written
// for. The committed positions stay those the sink loaded or committed, so
// fencing still sees what other writers committed since.
func (s *Sink) adopt(tbl *icetable.Table) error {
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	s.tbl, s.spec, s.res, s.resIn = tbl, spec, nil, nil
	s.planOnLast = false
	return nil
}

// addition is a column or nested field to add: its path (a list's
// element is "element", a map's value "value") and its type.
type addition struct {
	path []string
	typ  iceberg.Type
}

// columnsToAdd is what cols hold that sch lacks: whole columns by name
// (case-sensitive), and the fields new to a struct the table has.
func columnsToAdd(sch *iceberg.Schema, cols []Column) ([]addition, error) {
	var out []addition
	seen := map[string]bool{}
	for _, c := range cols {
		if c.Name == "" || c.Type == nil {
			return nil, fmt.Errorf("%w: column with an empty name or no type", table.ErrSchemaChange)
		}
		f, ok := sch.FindFieldByName(c.Name)
		if !ok {
			if !seen[c.Name] {
				out = append(out, addition{path: []string{c.Name}, typ: c.Type})
			}
			seen[c.Name] = true
			continue
		}
		var err error
		if out, err = nestedToAdd(out, []string{c.Name}, c.Type, f.Type); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// nestedToAdd appends to out the fields of v (the type of the values
// at path) the column type col lacks; a value that fits col no other way
// is an [ErrColumnConflict].
func nestedToAdd(out []addition, path []string, v, col iceberg.Type) ([]addition, error) {
	at := func(name string) []string { return append(slices.Clone(path), name) }
	switch vt := v.(type) {
	case *iceberg.StructType:
		ct, ok := col.(*iceberg.StructType)
		if !ok {
			break
		}
		for _, f := range vt.FieldList {
			if f.Name == "" || f.Type == nil {
				return nil, fmt.Errorf("%w: field of %s with an empty name or no type", table.ErrSchemaChange, strings.Join(path, "."))
			}
			cf, ok := structField(ct, f.Name)
			if !ok {
				if !slices.ContainsFunc(out, func(a addition) bool { return slices.Equal(a.path, at(f.Name)) }) {
					out = append(out, addition{path: at(f.Name), typ: f.Type})
				}
				continue
			}
			var err error
			if out, err = nestedToAdd(out, at(f.Name), f.Type, cf.Type); err != nil {
				return nil, err
			}
		}
		return out, nil
	case *iceberg.ListType:
		if ct, ok := col.(*iceberg.ListType); ok {
			return nestedToAdd(out, at("element"), vt.Element, ct.Element)
		}
	case *iceberg.MapType:
		if ct, ok := col.(*iceberg.MapType); ok && typeFits(vt.KeyType, ct.KeyType) {
			return nestedToAdd(out, at("value"), vt.ValueType, ct.ValueType)
		}
	default:
		if typeFits(v, col) {
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: %w: %s is %s, the new value is %s", ErrColumnConflict, schema.ErrIncompatibleType, strings.Join(path, "."), col, v)
}

// typeFits reports whether values of type v can be stored in a column of
// type col: field by field, with the promotions of [schema.Promotable]
// (those the write path's schema.Resolve applies) for primitives.
func typeFits(v, col iceberg.Type) bool {
	switch v := v.(type) {
	case *iceberg.StructType:
		cs, ok := col.(*iceberg.StructType)
		if !ok {
			return false
		}
		for _, f := range v.FieldList {
			if cf, ok := structField(cs, f.Name); ok && !typeFits(f.Type, cf.Type) {
				return false
			}
		}
		return true
	case *iceberg.ListType:
		cl, ok := col.(*iceberg.ListType)
		return ok && typeFits(v.Element, cl.Element)
	case *iceberg.MapType:
		cm, ok := col.(*iceberg.MapType)
		return ok && typeFits(v.KeyType, cm.KeyType) && typeFits(v.ValueType, cm.ValueType)
	}
	return schema.Promotable(v, col)
}

func structField(st *iceberg.StructType, name string) (iceberg.NestedField, bool) {
	for _, f := range st.FieldList {
		if f.Name == name {
			return f, true
		}
	}
	return iceberg.NestedField{}, false
}

// schemaMoved turns err, a commit error, into one matching
// [ErrSchemaChanged] when the table is the same table with the same spec
// and a newer schema.
func (s *Sink) schemaMoved(ctx context.Context, err error) error {
	if !errors.Is(err, commit.ErrTableChanged) {
		return err
	}
	tbl, lerr := snapshotcommit.Load(ctx, s.cat, s.ident)
	if lerr != nil {
		return err
	}
	md, was := tbl.Metadata(), s.tbl.Metadata()
	if md.TableUUID() == was.TableUUID() && md.DefaultPartitionSpec() == was.DefaultPartitionSpec() && md.CurrentSchema().ID != was.CurrentSchema().ID {
		return fmt.Errorf("%w: %w", ErrSchemaChanged, err)
	}
	return err
}

// renumber is t with distinct placeholder field ids (iceberg-go refuses a
// schema holding one id twice before it assigns the table's own).
func renumber(t iceberg.Type, next *int) iceberg.Type {
	id := func() int { *next++; return *next }
	switch t := t.(type) {
	case *iceberg.StructType:
		out := &iceberg.StructType{FieldList: make([]iceberg.NestedField, len(t.FieldList))}
		for i, f := range t.FieldList {
			f.ID, f.Required = id(), false
			f.Type = renumber(f.Type, next)
			out.FieldList[i] = f
		}
		return out
	case *iceberg.ListType:
		return &iceberg.ListType{ElementID: id(), Element: renumber(t.Element, next)}
	case *iceberg.MapType:
		return &iceberg.MapType{KeyID: id(), KeyType: renumber(t.KeyType, next), ValueID: id(), ValueType: renumber(t.ValueType, next)}
	}
	return t
}
