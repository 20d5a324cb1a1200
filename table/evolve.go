package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/schema"
)

// NewColumn describes a column for [Writer.AddColumns]: an optional
// top-level column, or, when the table has a column of that name, the
// fields its structs (at any depth, also inside lists and maps) lack
// where Type has them. The field ids inside Type are ignored (the table
// assigns them).
type NewColumn struct {
	Name string
	Type iceberg.Type
	// Doc is the doc string of a column the table lacks.
	Doc string
	// InitialDefault, when set, is the value readers see for a column the
	// table lacks in rows written before it existed (Iceberg's
	// initial-default; format version 3 or later), and the value written
	// into it by every later write whose input lacks the column (its
	// write-default). Nil: those rows read null, and such writes write
	// null.
	InitialDefault iceberg.Literal
}

// SchemaChange is what [Writer.AddColumns] did.
type SchemaChange struct {
	// Added are the columns and nested fields added, in the order given;
	// empty when the table had them all.
	Added []schema.Addition
	// SchemaID is the table's current schema after the call.
	SchemaID int
}

// SchemaChangePrefix starts the table property that records each schema
// change icerun made: icerun.schema-change.<schema id>.
const SchemaChangePrefix = "icerun.schema-change."

// ErrSchemaChange is returned for a column AddColumns cannot add: an
// empty name or no type, an initial-default on a table below format
// version 3, or a column or field the table has with a type the new one
// does not fit (that error also matches schema.ErrIncompatibleType, as a
// write of such values does).
var ErrSchemaChange = errors.New("table: schema change refused")

// AddColumn adds the column col as [Writer.AddColumns] does.
func (w *Writer) AddColumn(ctx context.Context, col NewColumn) error {
	_, err := w.AddColumns(ctx, col)
	return err
}

// AddColumns adds the columns of cols the table lacks, each optional, and
// the fields a struct column (at any depth, also inside lists and maps)
// lacks where a column's type has them, each optional, in one schema
// change: the one change that is always safe for reruns. Partitions
// rewritten later by code that does not know a column get its
// InitialDefault in it (the write-default), or nulls without one, and
// readers that do not know it are unaffected.
//
// A column or field the table already has (a rerun, or another writer
// racing to add it) is accepted when the new type fits the existing one
// (schema.Fits: the promotions schema.Resolve applies to the rows, int
// into long, float into double, decimal precision up, never long into
// double; a struct, list or map whose fields fit), else the call fails
// with [ErrSchemaChange], also matching schema.ErrIncompatibleType, and
// changes nothing. When the table has every column the call commits
// nothing: a rerun is a no-op. Which columns and fields were added is
// decided again on the reloaded table after each lost race.
//
// The change is recorded in the table property icerun.schema-change.<new
// schema id> with the code version and run id, and a table name mapping
// (schema.name-mapping.default), when the table has one, gains the new
// fields in the same commit, keeping every alias it holds. The call
// commits through the commit loop in the writer's commit turn, each
// attempt under its commit lock ([WithCommitLock]); an error whose
// outcome is unknown is resolved by looking for the new schema with this
// note as the table's current one.
// Renames and drops go through iceberg-go's UpdateSchema; icerun keeps
// resolving old names after a rename through the name mapping.
func (w *Writer) AddColumns(ctx context.Context, cols ...NewColumn) (SchemaChange, error) {
	op := "table: add columns to " + w.name
	fields := make([]iceberg.NestedField, len(cols))
	for i, c := range cols {
		if c.Name == "" || c.Type == nil {
			return SchemaChange{}, fmt.Errorf("%s: %w: column %d: empty name or nil type", op, ErrSchemaChange, i)
		}
		fields[i] = iceberg.NestedField{Name: c.Name, Type: c.Type}
	}
	var change SchemaChange
	var note []string
	plan := func(_ context.Context, tbl *icetable.Table) (*snapshotcommit.MetadataChange, error) {
		change, note = SchemaChange{SchemaID: tbl.Schema().ID}, nil
		adds, err := schema.Additions(tbl.Schema(), fields)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSchemaChange, err)
		}
		if len(adds) == 0 {
			return nil, nil // a rerun, or another writer added them
		}
		mc, err := w.stageColumns(tbl, cols, adds, &note)
		if err != nil {
			return nil, err
		}
		change.Added = adds
		return mc, nil
	}
	w.commitTurn.lock()
	defer w.commitTurn.unlock()
	t := w.target(op)
	res, err := snapshotcommit.UpdateMetadata(ctx, w.cat, snapshotcommit.MetadataRequest{Target: t, Plan: plan})
	if err != nil {
		return SchemaChange{}, err
	}
	if res.Unchanged {
		return SchemaChange{SchemaID: change.SchemaID}, nil
	}
	w.obs.log.Info("schema change", slog.String("table", w.name), slog.String("change", strings.Join(note, ", ")), slog.Int("schema", change.SchemaID))
	return change, nil
}

// stageColumns stages the additions adds of cols on tbl: the new schema,
// the icerun.schema-change.<id> note (set into *note) and the extended
// name mapping. The change landed when the table's current schema is the
// new one and holds this note.
func (w *Writer) stageColumns(tbl *icetable.Table, cols []NewColumn, adds []schema.Addition, note *[]string) (*snapshotcommit.MetadataChange, error) {
	txn := tbl.NewTransaction()
	upd := txn.UpdateSchema(true, false)
	for _, a := range adds {
		var doc string
		var def iceberg.Literal
		if len(a.Path) == 1 {
			c := columnNamed(cols, a.Path[0])
			doc, def = c.Doc, c.InitialDefault
		}
		if v := tbl.Metadata().Version(); def != nil && v < 3 {
			return nil, fmt.Errorf("%w: initial-default of %s needs table format version 3, the table is version %d", ErrSchemaChange, a.Path[0], v)
		}
		next := 0
		upd.AddColumn(a.Path, renumber(a.Type, &next), doc, false, def)
		text := "add column " + a.String()
		if def != nil {
			text += fmt.Sprintf(" initial-default %v", def)
		}
		*note = append(*note, text)
	}
	if err := upd.Commit(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchemaChange, err)
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return nil, err
	}
	id := staged.Schema().ID
	key := SchemaChangePrefix + strconv.Itoa(id)
	props := iceberg.Properties{key: fmt.Sprintf("%s by code version %s, run %s", strings.Join(*note, ", "), w.cfg.codeVersion, w.cfg.runID)}
	if err := keepMapping(props, tbl, staged.Schema()); err != nil {
		return nil, err
	}
	if err := txn.SetProperties(props); err != nil {
		return nil, err
	}
	return snapshotcommit.Staged(txn, func(md icetable.Metadata) bool {
		return md.CurrentSchema().ID == id && md.Properties()[key] == props[key]
	})
}

// columnNamed is the first column of cols named name.
func columnNamed(cols []NewColumn, name string) NewColumn {
	for _, c := range cols {
		if c.Name == name {
			return c
		}
	}
	return NewColumn{}
}

// keepMapping adds to props the name mapping of tbl extended with the
// fields of next, its new schema, when tbl has a name mapping: the new
// columns resolve by name through it, and the aliases it holds stay.
func keepMapping(props iceberg.Properties, tbl *icetable.Table, next *iceberg.Schema) error {
	if _, ok := tbl.Properties()[icetable.DefaultNameMappingKey]; !ok {
		return nil
	}
	nm, changed := schema.MergeMapping(tbl.NameMapping(), next)
	if !changed {
		return nil
	}
	b, err := json.Marshal(nm)
	if err != nil {
		return err
	}
	props[icetable.DefaultNameMappingKey] = string(b)
	return nil
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
