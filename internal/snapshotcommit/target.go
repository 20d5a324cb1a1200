package snapshotcommit

import (
	"fmt"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// Target is what every commit names, whatever its operation: the table,
// the state its files were written for, the call's token, and how the
// [loop] runs it. Every request type embeds it ([Request],
// [RowDeltaRequest], [AppendRequest], [ManifestsRequest],
// [PublishRequest], [DropBranchRequest], [MetadataRequest]); the loop
// reads nothing else of a request.
type Target struct {
	Op        string // names the operation in errors, e.g. "commit: replace db.orders/event_date=2026-07-14"
	Ident     icetable.Identifier
	TableUUID string // the table the files were written for; "" checks none
	// Spec and SchemaID are the partition spec and schema the files were
	// written with: an attempt on a table whose current spec or schema
	// is another fails with [commit.ErrTableChanged]. A nil Spec checks
	// neither (a publish, a ref change or a manifest rewrite plan both on
	// each attempt's state).
	Spec     *partition.Spec
	SchemaID int
	Token    string // unique per call; recorded as SummaryCommitToken
	Policy   commit.Policy
	// Spent is the attempts a caller's earlier rounds of the same
	// operation spent (a caller that plans again after a lost race, and
	// commits with a new request): Policy.Attempts is the budget of all
	// rounds, and attempts are numbered on from Spent, in Result.Attempts,
	// Attempted and the errors. At least one attempt is made.
	Spent int
	// Base, when set, is a table state loaded during this call (after the
	// caller began): the first attempt plans on it instead of loading the
	// table again. A state that moved since only costs a conflict and a
	// fresh attempt; an Unchanged result on it is still a state the table
	// held during the call.
	Base *icetable.Table
	// Lock, when set, is held around every attempt's load, plan and
	// commit (see [commit.Locker]); Base is then not used, since a state
	// loaded before the lock was taken may be stale.
	Lock commit.Locker
	// Committed, when set, is called with the table state the commit
	// produced, by every operation (not after an Unchanged result or an
	// outcome found by token).
	Committed func(tbl *icetable.Table)
	// Attempted, when set, is called after every attempt with its number
	// and error (nil when it committed); for logs and metrics. An attempt
	// that found nothing to commit is not reported.
	Attempted func(attempt int, err error)
}

// sameTable fails when tbl is not the table state the files were written
// for: another table under the same name, another spec or schema.
func (t *Target) sameTable(tbl *icetable.Table) error {
	md := tbl.Metadata()
	switch {
	case t.TableUUID != "" && md.TableUUID().String() != t.TableUUID:
		return fmt.Errorf("%s: %w: table was dropped and recreated", t.Op, commit.ErrTableChanged)
	case t.Spec == nil: // planned on each attempt
		return nil
	case md.DefaultPartitionSpec() != t.Spec.ID():
		return fmt.Errorf("%s: %w: partition spec is now %d, rows were written for %d", t.Op, commit.ErrTableChanged, md.DefaultPartitionSpec(), t.Spec.ID())
	case Supported(md) != nil:
		return fmt.Errorf("%s: %w", t.Op, Supported(md))
	case md.CurrentSchema().ID != t.SchemaID:
		return fmt.Errorf("%s: %w: schema is now %d, rows were written for %d", t.Op, commit.ErrTableChanged, md.CurrentSchema().ID, t.SchemaID)
	}
	return nil
}
