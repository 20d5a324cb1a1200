package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
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
// fields in the same commit, keeping every alias it holds. Each attempt
// holds the writer's commit turn and commit lock ([Writer.LockCommits]).
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
	policy, err := w.cfg.policy.WithDefaults()
	if err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	for n := 1; ; n++ {
		change, err := w.addColumns(ctx, op, cols, fields)
		if err == nil || !snapshotcommit.IsConflict(err) {
			return change, err
		}
		if n >= policy.Attempts {
			return SchemaChange{}, fmt.Errorf("%s: %w after %d attempts: %w", op, commit.ErrConflict, n, err)
		}
		select {
		case <-time.After(policy.Backoff(n)):
		case <-ctx.Done():
			return SchemaChange{}, fmt.Errorf("%s: %w", op, context.Cause(ctx))
		}
	}
}

// addColumns is one attempt of AddColumns on the table as it is now. A
// conflict is returned unwrapped, for the caller to retry.
func (w *Writer) addColumns(ctx context.Context, op string, cols []NewColumn, fields []iceberg.NestedField) (SchemaChange, error) {
	unlock, err := w.LockCommits(ctx)
	if err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	defer unlock()
	tbl, err := w.refresh(ctx)
	if err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	adds, err := schema.Additions(tbl.Schema(), fields)
	if err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w: %w", op, ErrSchemaChange, err)
	}
	if len(adds) == 0 {
		return SchemaChange{SchemaID: tbl.Schema().ID}, nil
	}
	txn := tbl.NewTransaction()
	upd := txn.UpdateSchema(true, false)
	note := make([]string, 0, len(adds))
	for _, a := range adds {
		var doc string
		var def iceberg.Literal
		if len(a.Path) == 1 {
			c := columnNamed(cols, a.Path[0])
			doc, def = c.Doc, c.InitialDefault
		}
		if v := tbl.Metadata().Version(); def != nil && v < 3 {
			return SchemaChange{}, fmt.Errorf("%s: %w: initial-default of %s needs table format version 3, the table is version %d", op, ErrSchemaChange, a.Path[0], v)
		}
		next := 0
		upd.AddColumn(a.Path, renumber(a.Type, &next), doc, false, def)
		text := "add column " + a.String()
		if def != nil {
			text += fmt.Sprintf(" initial-default %v", def)
		}
		note = append(note, text)
	}
	if err := upd.Commit(); err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w: %w", op, ErrSchemaChange, err)
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	props := iceberg.Properties{SchemaChangePrefix + strconv.Itoa(staged.Schema().ID): fmt.Sprintf("%s by code version %s, run %s", strings.Join(note, ", "), w.cfg.codeVersion, w.cfg.runID)}
	if err := keepMapping(props, tbl, staged.Schema()); err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	if err := txn.SetProperties(props); err != nil {
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	committed, err := txn.Commit(ctx)
	if err != nil {
		if snapshotcommit.IsConflict(err) {
			return SchemaChange{}, err
		}
		return SchemaChange{}, fmt.Errorf("%s: %w", op, err)
	}
	w.setTable(committed)
	w.obs.log.Info("schema change", slog.String("table", w.name), slog.String("change", strings.Join(note, ", ")), slog.Int("schema", committed.Schema().ID))
	return SchemaChange{Added: adds, SchemaID: committed.Schema().ID}, nil
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
