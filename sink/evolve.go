package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// Column is a column for [Sink.AddColumns]: [table.NewColumn].
type Column = table.NewColumn

var (
	// ErrColumnConflict is the error of [Sink.AddColumns] for a column it
	// cannot add.
	//
	// Deprecated: match [table.ErrSchemaChange] (and
	// schema.ErrIncompatibleType for a column the table has with a type
	// the new one does not fit), which this is.
	ErrColumnConflict = table.ErrSchemaChange
	// ErrSchemaChanged is returned by a commit whose rows were written for
	// a schema the table no longer has (another writer added a column):
	// nothing was committed; call [Sink.Start] and resume from the
	// positions it returns (the rows are written again, for the new
	// schema).
	ErrSchemaChanged = errors.New("sink: the table's schema changed under the pending rows")
)

// AddColumns commits the pending rows (which do not need the columns),
// then adds cols through [table.Writer.AddColumns], on the sink's table
// writer (its retry policy, commit lock, lineage and logger): the columns
// the table lacks and the fields its struct columns lack, each optional,
// in a schema change of its own; rows committed before read null in them.
// A column or field the table already has (another sink racing to add
// it) is accepted when the new type fits the existing one, by the rule of
// the table's writes (schema.Fits), else it fails with
// [table.ErrSchemaChange], also matching schema.ErrIncompatibleType as
// the rows would, and changes nothing. The sink then writes rows for the
// table's new schema.
func (s *Sink) AddColumns(ctx context.Context, cols ...Column) error {
	if s.closed {
		return ErrClosed
	}
	if _, err := s.Commit(ctx); err != nil {
		return err
	}
	w, err := s.writer(ctx)
	if err != nil {
		return err
	}
	change, err := w.AddColumns(ctx, cols...)
	if err != nil {
		return fmt.Errorf("sink: %s: %w", s.name, err)
	}
	if len(change.Added) == 0 {
		s.cfg.log.Info("sink schema change: the table has the columns", slog.String("table", s.name), slog.Int("schema", change.SchemaID))
	}
	return s.adopt(w.Table())
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
