// Package commit holds what a user of icerun handles of a commit: its
// outcome, its errors, the retry budget, the commit lock, and the names
// icerun records in the table. The engine that plans and commits a
// partition replacement is internal (internal/snapshotcommit); package
// table drives it and returns what this package defines.
//
// # Outcome
//
// Every write of table's Writer returns a [Result] (a window replace adds
// one [PartitionResult] per partition). [Result].Unchanged means the
// partitions already held exactly this input from this code version and
// nothing touched them since: no snapshot was made.
//
// # Errors
//
// Match them with errors.Is:
//
//   - [ErrConflict]: other writers kept moving the table through the whole
//     retry budget; nothing was committed and running again is safe;
//   - [ErrUnknownOutcome] (an [*UnknownOutcomeError]): the catalog call
//     may have been applied and the table could not be reloaded to find
//     out; the new data files are kept, and [SummaryCommitToken] finds the
//     commit later;
//   - [ErrTableChanged]: the table was dropped, recreated, or its schema or
//     spec changed between writing the files and committing them;
//   - [ErrUnsupported]: the table holds something icerun cannot replace
//     exactly;
//   - [ErrNoSuchBranch], [ErrPublishConflict] (a [*PublishConflictError]
//     naming the partitions): write-audit-publish;
//   - [ErrBadPolicy], [ErrLock]: the retry policy or the commit lock.
//
// # Behaviour
//
// [Policy] is the retry budget of the optimistic commit loop and explains
// its backoff; [Locker] ([PostgresLock], [FileLock]) serialises the commits of writers
// that share it.
//
// # Lineage
//
// Every icerun snapshot's summary carries the Summary* properties (run,
// code version, schema, input fingerprints, per-partition records), which
// any Iceberg engine reads; [PropertyLineage] names the checkpoint that
// keeps the lineage of expired snapshots. table.History and
// table.LastWrites decode them.
//
// How a commit is planned, written and retried, and why:
// docs/design.md ("Snapshots: icerun writes its own", "Lineage").
package commit
