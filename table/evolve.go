package table

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
)

// NewColumn describes a column added by [Writer.AddColumn].
type NewColumn struct {
	Name string
	Type iceberg.Type
	Doc  string
	// InitialDefault, when set, is the value readers see for the column in
	// rows written before it existed (Iceberg's initial-default; format
	// version 3 or later), and the value written into it by every later
	// write whose input lacks the column (its write-default). Nil: those
	// rows read null, and such writes write null.
	InitialDefault iceberg.Literal
}

// SchemaChangePrefix starts the table property that records each schema
// change icerun made: icerun.schema-change.<schema id>.
const SchemaChangePrefix = "icerun.schema-change."

// ErrSchemaChange is returned for a column AddColumn cannot add.
var ErrSchemaChange = errors.New("table: schema change refused")

// AddColumn adds an optional top-level column, the one schema change that
// is always safe for reruns: partitions rewritten later by code that does
// not know the column get its InitialDefault in it (the write-default), or
// nulls without one, and readers that do not know it are unaffected. The change is recorded in the table property
// icerun.schema-change.<new schema id> with the code version and run id.
// Renames and drops go through iceberg-go's UpdateSchema; icerun keeps
// resolving old names after a rename through the name mapping.
func (w *Writer) AddColumn(ctx context.Context, col NewColumn) error {
	op := fmt.Sprintf("table: add column %s to %s", col.Name, w.name)
	if col.Name == "" || col.Type == nil {
		return fmt.Errorf("%s: %w: empty name or nil type", op, ErrSchemaChange)
	}
	tbl, err := w.refresh(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if v := tbl.Metadata().Version(); col.InitialDefault != nil && v < 3 {
		return fmt.Errorf("%s: %w: initial-default needs table format version 3, the table is version %d", op, ErrSchemaChange, v)
	}
	txn := tbl.NewTransaction()
	upd := txn.UpdateSchema(true, false).AddColumn([]string{col.Name}, col.Type, col.Doc, false, col.InitialDefault)
	if err := upd.Commit(); err != nil {
		return fmt.Errorf("%s: %w: %w", op, ErrSchemaChange, err)
	}
	staged, err := txn.StagedTable()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	next := staged.Schema()
	note := fmt.Sprintf("add column %s %s", col.Name, col.Type)
	if col.InitialDefault != nil {
		note += fmt.Sprintf(" initial-default %v", col.InitialDefault)
	}
	note += fmt.Sprintf(" by code version %s, run %s", w.cfg.codeVersion, w.cfg.runID)
	if err := txn.SetProperties(iceberg.Properties{SchemaChangePrefix + strconv.Itoa(next.ID): note}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	committed, err := txn.Commit(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	w.setTable(committed)
	return nil
}
