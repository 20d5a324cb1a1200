package table

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// Writer replaces partitions of one Iceberg table. It is safe for
// concurrent use: concurrent replacements, from this and from other
// processes, are serialised by the catalog's optimistic commit.
type Writer struct {
	cat   catalog.Catalog
	ident icetable.Identifier
	name  string
	cfg   config

	mu  sync.Mutex
	tbl *icetable.Table

	// commitTurn serialises this writer's commit loops: concurrent calls
	// on one writer write their data files in parallel, then commit one at
	// a time, instead of conflicting with each other in the catalog (each
	// conflict costs a backoff and, on the SQL catalog, an orphaned
	// metadata.json). LockCommits takes it too.
	commitTurn turn

	obs *observer // observe.go
}

// ErrNilInput is returned for a nil row reader.
var ErrNilInput = errors.New("table: nil input")

// Open returns a Writer for the table ident of cat. It loads the table
// once to check that it exists and that its partition field names are
// names a manifest can hold (see [partition.CheckFieldNames]: otherwise
// the error wraps [partition.ErrInvalidFieldName]); every replacement
// loads it again and checks the names again.
func Open(ctx context.Context, cat catalog.Catalog, ident icetable.Identifier, opts ...Option) (*Writer, error) {
	if cat == nil {
		return nil, fmt.Errorf("%w: nil catalog", ErrBadOption)
	}
	cfg := defaults()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.upsertNewerOnly && len(cfg.upsertOrder) == 0 {
		return nil, fmt.Errorf("%w: WithUpsertNewerOnly needs WithUpsertOrder", ErrBadOption)
	}
	obs, err := newObserver(&cfg)
	if err != nil {
		return nil, err
	}
	tbl, err := snapshotcommit.Load(ctx, cat, ident)
	if err != nil {
		return nil, fmt.Errorf("table: open %s: %w", strings.Join(ident, "."), err)
	}
	if err := partition.CheckFieldNames(tbl.Spec()); err != nil {
		return nil, fmt.Errorf("table: open %s: %w", strings.Join(ident, "."), err)
	}
	return &Writer{cat: cat, ident: ident, name: strings.Join(ident, "."), cfg: cfg, tbl: tbl, obs: obs, commitTurn: newTurn()}, nil
}

// Table returns the latest table state this writer knows.
func (w *Writer) Table() *icetable.Table {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tbl
}

// RunID is the run id recorded in the snapshots this writer makes.
func (w *Writer) RunID() string { return w.cfg.runID }

// CodeVersion is the code version recorded in the snapshots this writer makes.
func (w *Writer) CodeVersion() string { return w.cfg.codeVersion }

// Key parses a partition key such as "event_date=2026-07-14" (several
// fields joined by "/") against the table's current partition spec.
func (w *Writer) Key(s string) (partition.Key, error) {
	tbl := w.Table()
	return partition.ParseKey(tbl.Spec(), tbl.Schema(), s)
}

// Refresh loads the table from the catalog, remembers it as [Writer.Table]
// and returns it.
func (w *Writer) Refresh(ctx context.Context) (*icetable.Table, error) { return w.refresh(ctx) }

// refresh loads the table from the catalog and remembers it.
func (w *Writer) refresh(ctx context.Context) (*icetable.Table, error) {
	tbl, err := snapshotcommit.Load(ctx, w.cat, w.ident)
	if err != nil {
		return nil, err
	}
	w.setTable(tbl)
	return tbl, nil
}

func (w *Writer) setTable(tbl *icetable.Table) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tbl == nil || tbl.Metadata().LastUpdatedMillis() >= w.tbl.Metadata().LastUpdatedMillis() {
		w.tbl = tbl
	}
}
