package table

import (
	"context"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// observed runs fn as one observed call of operation (its span, log line
// and metrics, see observe.go); op describes the call, the prefix of its
// errors. Every entry point that returns a [commit.Result] starts so.
func (w *Writer) observed(ctx context.Context, operation, op string, fn func(ctx context.Context) (commit.Result, error)) (commit.Result, error) {
	ctx, done := w.observe(ctx, operation, op)
	res, err := fn(ctx)
	done(res, err)
	return res, err
}

// begin is the prologue of an operation that writes the table's current
// partition spec: the table state it plans on (the writer's branch head),
// checked to be one the commit loop supports, and that spec. Its errors
// carry op.
func (w *Writer) begin(ctx context.Context, op string) (*icetable.Table, *partition.Spec, error) {
	tbl, err := w.head(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := snapshotcommit.Supported(tbl.Metadata()); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return tbl, spec, nil
}
