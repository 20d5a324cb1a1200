package commit

import (
	"errors"
	"fmt"
)

// Result describes one replacement.
type Result struct {
	SnapshotID   int64    // the snapshot that made the change (the current one when Unchanged)
	Partitions   []string // canonical keys replaced, sorted
	AddedFiles   int
	DeletedFiles int   // data files removed (delete files the replacement dropped are not counted)
	AddedRows    int64 // rows of the added data files; on an Unchanged result it may count the input's rows, which the table already holds: nothing was added
	DeletedRows  int64 // record counts of the removed data files, rows already deleted by delete files included
	Attempts     int   // commit attempts, 1 when there was no conflict
	Unchanged    bool  // the partitions already held exactly this input from this code: no new snapshot
	// Ignored lists input fields that matched no table column and were
	// ignored (schema.IgnoreUnknown).
	Ignored []string
	// Stale counts the input keys whose change was not newer, by its
	// ordering columns, than what the table holds (a changelog write, or
	// an upsert that compares with the stored rows): they changed nothing.
	Stale int64

	// The fields below are set by a window replace (table's
	// Writer.ReplaceWindow) and are zero otherwise.

	// PerPartition has one entry per partition of the window, sorted by key.
	PerPartition []PartitionResult
	// LateRows counts the input rows whose partition is outside the
	// window, dropped or routed to LateTable.
	LateRows int64
	// LateByPartition splits LateRows by the canonical key of the partition
	// the rows belong to.
	LateByPartition map[string]int64
	// LateTable is the side table the late rows were written to, "" when
	// they were not routed.
	LateTable string
}

// PartitionResult is what a window replace did to one partition.
type PartitionResult struct {
	Key          string // canonical key
	AddedFiles   int
	DeletedFiles int
	AddedRows    int64
	DeletedRows  int64
	Unchanged    bool // it already held exactly this input from this code: not touched
}

var (
	// ErrConflict means the commit could not be made consistent within the
	// retry budget: other writers kept moving the table. Nothing was
	// committed; running the same replacement again is safe.
	ErrConflict = errors.New("commit: conflict")

	// ErrUnknownOutcome means the catalog call failed in a way that may
	// have applied the commit, and the table could not be reloaded to find
	// out. Match it with errors.Is; the *UnknownOutcomeError carries the
	// commit token and the files that must not be deleted blindly.
	ErrUnknownOutcome = errors.New("commit: outcome unknown")

	// ErrTableChanged means the table was dropped, recreated, or its schema
	// or partition spec changed between writing the data files and
	// committing them. Nothing was committed.
	ErrTableChanged = errors.New("commit: table changed under the writer")

	// ErrUnsupported means the table or partition holds something icerun
	// cannot replace exactly (a format version above 3, a table file IO
	// that cannot write, an Upsert of rows in older-spec files). Nothing
	// was committed.
	ErrUnsupported = errors.New("commit: unsupported table state")
)

// UnknownOutcomeError reports a commit whose outcome could not be
// determined. Token is the value of [SummaryCommitToken] to look for later;
// Files are the data files the commit would have added: they may be live
// and must only be removed by an orphan cleanup that checks every snapshot.
type UnknownOutcomeError struct {
	Op    string
	Token string
	Files []string
	Err   error
}

func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("%s: outcome unknown (commit token %s, %d files kept): %v", e.Op, e.Token, len(e.Files), e.Err)
}

func (e *UnknownOutcomeError) Unwrap() []error { return []error{ErrUnknownOutcome, e.Err} }
