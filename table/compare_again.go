package table

import (
	"context"
	"errors"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// compareAgain runs compare, which compares its input with the stored
// rows of tbl and commits, until it decides on the table's current
// state: a comparison whose commit found that another writer changed a
// key it compared (errDecidedOnOldState, see keyguard.go) is made again
// on the table's new head, within the writer's retry attempts, while the
// schema and partition spec stay those of tbl. Past the attempts it
// fails with commit.ErrConflict.
func compareAgain[R any](ctx context.Context, w *Writer, op string, tbl *icetable.Table, specID int, compare func(tbl *icetable.Table) (R, error)) (R, error) {
	attempts := w.cfg.policy.Attempts
	if attempts == 0 {
		attempts = commit.DefaultPolicy.Attempts
	}
	schemaID := tbl.Schema().ID
	for round := 1; ; round++ {
		out, err := compare(tbl)
		if !errors.Is(err, errDecidedOnOldState) {
			return out, err
		}
		if round >= attempts {
			return out, fmt.Errorf("%s: %w after %d rounds: %v", op, commit.ErrConflict, round, err)
		}
		if tbl, err = w.head(ctx); err != nil {
			return out, fmt.Errorf("%s: %w", op, err)
		}
		if tbl.Schema().ID != schemaID || tbl.Metadata().DefaultPartitionSpec() != specID {
			return out, fmt.Errorf("%s: %w: schema or partition spec changed while comparing", op, commit.ErrTableChanged)
		}
	}
}
