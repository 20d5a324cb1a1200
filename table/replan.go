package table

import (
	"context"
	"fmt"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
)

// replan is the re-plan loop of the operations that plan a change on a
// table state and commit it only while what they read still holds:
// Upsert (copy-on-write and merge-on-read), Delete, DeleteWhere and
// Compact. It keeps the call's retry budget:
//
//   - The budget is the writer's [WithRetry] Attempts
//     ([commit.DefaultPolicy]'s when zero) and counts commit attempts of
//     the whole call, over every round: a round commits within budget
//     attempts, spent of which earlier rounds used (the commit loop's
//     Request.Spent), so that re-planning never resets it.
//   - A round's result.Attempts is the call's total when the round made a
//     commit attempt (snapshotcommit counts Spent on), and 0 when it made
//     none (its plan changed nothing, or it failed first); a round that
//     attempted counts at least one more than the rounds before it.
//     The result the loop returns carries the total.
//   - A round whose error moved says is a lost race on what it read: when
//     budget is left, again (when set) prepares the next round (reading
//     the table's new state) and the loop plans again; an error of again
//     ends the loop with it. Once the budget is spent the loop fails with
//     [commit.ErrConflict], its text naming the attempts and the cause.
//   - Every other error, and success, ends the loop as the round returned
//     it (with the total attempts). Staged files are the rounds' and the
//     caller's to remove.
type replan struct {
	op    string
	round func(budget, spent int) (commit.Result, error)
	moved func(error) bool
	again func() error
}

// run runs the rounds of r within the budget of w's retry policy.
func (w *Writer) replan(r replan) (commit.Result, error) {
	budget := w.cfg.policy.Attempts
	if budget == 0 {
		budget = commit.DefaultPolicy.Attempts
	}
	spent := 0
	for {
		result, err := r.round(budget, spent)
		if result.Attempts > 0 {
			spent = max(result.Attempts, spent+1) // the total: Spent counted on
		}
		result.Attempts = spent
		if err == nil {
			result.Attempts = max(spent, 1)
		}
		switch {
		case err == nil || !r.moved(err):
			return result, err
		case spent >= budget:
			return result, fmt.Errorf("%s: %w after %d attempts: %v", r.op, commit.ErrConflict, spent, err)
		}
		if r.again != nil {
			if err := r.again(); err != nil {
				return result, err
			}
		}
	}
}

// rebase reads the table state a lost race left, for the next round of a
// change planned on schema schemaID and partition spec specID: a state
// whose schema or spec differs fails with [commit.ErrTableChanged]
// (while doing what), since the change was resolved to the old ones.
func (w *Writer) rebase(ctx context.Context, op string, schemaID, specID int, doing string) (*icetable.Table, error) {
	tbl, err := w.head(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if tbl.Schema().ID != schemaID || tbl.Metadata().DefaultPartitionSpec() != specID {
		return nil, fmt.Errorf("%s: %w: schema or partition spec changed while %s", op, commit.ErrTableChanged, doing)
	}
	return tbl, nil
}
