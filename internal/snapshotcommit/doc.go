// Package snapshotcommit is icerun's commit engine: it plans and commits
// an atomic partition replacement. Package table drives it (and backfill
// and cleanup use its lineage, branch and conflict helpers); what users
// see of it, the results, errors, retry policy, commit locks and the
// summary property names, is the public package
// [github.com/icerun/icerun/commit], which this package imports and which
// never imports it.
//
// A replacement is prepared by the caller (package table): the new data
// files are already written, once, outside of this package. [Replace] then
// runs the commit loop. Each attempt:
//
//  1. loads the table from the catalog (never trusting a cached state);
//  2. re-plans which data files the replaced partitions hold now, under the
//     current spec and under older specs;
//  3. checks idempotence: when every partition already holds exactly this
//     input from this code version and nothing touched it since, it stops
//     with [commit.Result].Unchanged and no snapshot ([Request].SkipHeld
//     leaves each such partition out and commits the others, as
//     ReplaceWindow does; decided again on every attempt's state);
//  4. writes one snapshot that deletes those files and adds the new ones
//     (manifests and a manifest list, with iceberg-go's public manifest
//     writers) and commits it through the catalog, requiring that main,
//     the schema and the spec have not moved. Only manifests whose
//     partition summaries may list a deleted file are read and rewritten;
//     manifests stay small and sorted by partition (see ManifestEntries),
//     so the cost follows the replaced partitions, not the table.
//
// The outcome of a failed attempt is classified before anything else
// happens:
//
//   - a conflict (the catalog refused the commit because the table moved:
//     iceberg-go's ErrCommitFailed, or a failed requirement such as
//     `branch "main" has changed` or `was created concurrently`) means
//     nothing was committed; the loop removes what the lost attempt wrote
//     (its manifests, and the metadata files catalogs wrote for commits
//     that lost the race from the same base, once the winner is in the
//     metadata log), backs off and tries again, within the [commit.Policy]
//     budget, then fails with [commit.ErrConflict];
//   - any other error may have been applied by the catalog. The loop
//     reloads the table and looks for this call's commit token in the
//     snapshot summaries. Found: the commit landed, and the call succeeds.
//     Not found: the catalog did not apply it (SQL catalog commits are
//     synchronous); the attempt's manifests and the metadata file the
//     catalog wrote for it (found by the commit token) are removed, and the
//     error is returned, wrapping the context's cause when it ended. When the table cannot be
//     reloaded, or a REST catalog answered "commit state unknown" (it may
//     still apply the commit), the call fails with an
//     [*commit.UnknownOutcomeError] and the caller must not delete the new files:
//     the table may reference them.
//
// Older-spec files are decided once per call ([Request].OldSpec) and the
// decisions kept across attempts; the rewrites they made belong to the
// call, and those the table does not reference when [Replace] returns
// (made by an attempt that lost a race, or by a call that failed) are
// removed.
//
// Row-level delete files are removed as Java's ReplacePartitions removes
// them (see deletes.go): those of the replaced partitions, those older
// than every data file left, and on format v3 the deletion vectors of
// removed data files. On format v3 every snapshot assigns row lineage
// (first-row-id, added-rows, the data manifests' first_row_id; see
// rowlineage.go).
//
// iceberg-go's own commit retries (table property commit.retry.num-retries)
// are not involved: the loop calls the catalog itself.
//
// # One commit loop
//
// Every operation commits through the same loop (loop.go, whose comment
// states its invariants), the only code of the module that calls a
// catalog's CommitTable (TestOneCommitPoint holds it so): [Replace],
// [RowDelta], [Append], [RewriteManifests], [Publish], [DropBranch] and
// [UpdateMetadata] (a change that adds no snapshot: a schema change, table
// properties, a snapshot expiry, staged in an iceberg-go transaction that
// is never committed itself; [Staged] takes its updates and requirements,
// and the change's Landed finds it after a lost answer). No non-test code
// commits an iceberg-go Transaction but a benchmark's baseline and an
// example playing another engine (TestOneCommitPoint). Each supplies only what it validates on an attempt's table state and
// what it stages on it, as Java Iceberg's SnapshotProducer subclasses
// supply validate and apply; loading, the lock, the commit, the outcome's
// classification, the search for a commit whose answer was lost, the
// cleanup of lost attempts, the backoff and the Committed and Attempted
// hooks are the loop's, the same for all. Every request type embeds a
// [Target]: the operation's name, the table, the spec and schema its files
// were written for, the token, the policy, the lock and the base state.
//
// Every snapshot carries the lineage properties in [Lineage] (see the
// commit.Summary* constants), readable by any Iceberg engine, and the standard
// summary Java Iceberg writes for the same change ([Kind]: operation,
// added/deleted counts, changed-partition-count, manifest counts, totals).
// Manifest-list partition summaries follow the spec's field_summary rules
// ([partition.Spec.Summaries]), not iceberg-go v0.7.0's. A caller above
// an operation that commits for it (the sink above
// table.Writer.ApplyChanges) adds its own properties to every attempt of
// one table's [Replace] and [RowDelta] with [WithStamp].
//
// # Lineage and maintenance
//
// [Records] and [LastRecords] read the per-partition records of the
// snapshot summaries on main's ancestry, then the lineage checkpoint
// (commit.PropertyLineage) that [WriteCheckpoint] writes when snapshots
// are expired; [IsCheckpoint] keeps cleanup from taking it for an orphan.
// Records are keyed by the canonical key text: "" for the one key of an
// unpartitioned table, whose summaries hold commit.SummaryPartitions
// present and empty.
// Backfill's maintenance commits (metadata pruning properties, snapshot
// expiry with its checkpoint) are [UpdateMetadata] changes.
//
// # Branches (write-audit-publish)
//
// A [Request] with a Branch commits to that branch instead of main: each
// attempt plans on the branch's head ([OnBranch], a read-only view of the
// table whose current snapshot is the head, so planning, Unchanged
// detection and [Records] read the branch's ancestry), the new snapshot's
// parent is the head, and the commit sets and requires the branch ref;
// main is neither read nor required. A branch that does not exist is cut
// from main's current snapshot by its first commit. Sequence numbers and
// first row ids are table-wide: a commit of one ref that another ref's
// commit overtook is refused by the catalog, a conflict ([IsConflict]);
// a snapshot without a parent requires every other ref as it was planned
// (rootGuards), since the catalog does not check its sequence number.
//
// [Publish] makes main hold what the branch's icerun writes made of their
// partitions: a fast-forward of main's ref when main has not moved since
// the branch's base, otherwise the branch's partition replacements planned
// again on main's current state with the branch's data files, failing with
// [commit.ErrPublishConflict] where main replaced one of them after the base.
// A re-planned publish requires the branch head it planned from, refuses
// writes made under another spec ([commit.ErrBranchSpecChanged]) and a
// history it cannot walk ([commit.ErrBranchExpired]), and carries the
// branch's position deletes and deletion vectors in delete manifests.
// [DropBranch] removes the ref.
package snapshotcommit
