// Package table is icerun's facade: a [Writer] that replaces partitions of
// an Iceberg table so that every write is safe to re-run.
//
// # Basics
//
// [Open] a Writer on a table of any iceberg-go catalog, then call
// [Writer.ReplacePartition] with a key and the rows that partition must hold,
// or [Writer.ReplacePartitions] to replace exactly the partitions the rows
// produce (dynamic overwrite). Each call writes its Parquet files once and
// commits one snapshot; readers see the partition before or after, never in
// between. Running the same call again leaves the same table content, and
// when nothing changed it makes no snapshot at all ([commit.Result].Unchanged).
//
// Every snapshot records its lineage in the summary: the run id, the code
// version, the schema id, the partitions and a fingerprint of the input
// (the commit.Summary* constants).
//
// # Change streams
//
// [Writer.ApplyChanges] keeps the latest state of each key from a change
// stream: upserts and deletes ordered by columns of the rows (a version,
// an event time, a source offset), each compared with what the table
// holds, so a late or redelivered older event changes nothing; deletes
// leave tombstones in [TombstoneTable]. One call is one snapshot.
//
// # Write-audit-publish
//
// A Writer opened [WithBranch] commits every write to that branch; main
// and its readers see nothing of it. Audit the branch with any engine, or
// with [Writer.ReadBranch], then [Writer.Publish] it onto main in one
// snapshot (a fast-forward, or the branch's replacements planned again on
// main's current state; [commit.ErrPublishConflict] where main replaced
// the same partitions since, unless [WithForce]). [Writer.DropBranch]
// removes the branch.
//
// # Options
//
// [Open] takes functional [Option]s; it validates each one and returns an
// error for a bad value, never rewriting it. Every option lives in a file
// named options*.go: options.go holds those of the writer as a whole (run
// id, code version, retry policy, unknown fields, parallel writes), and
// options_<concept>.go those of the one concept each configures, with the
// types it takes (branch, commit lock, contract, upsert order, write mode,
// compaction policy, observability). Each option's doc says its default.
//
// # Caveats
//
//   - A partition that holds row-level delete files (merge-on-read
//     position deletes, deletion vectors, equality deletes) is replaced
//     as Java's ReplacePartitions does it: its data files and its delete
//     files go, and so do delete files that then apply to no live data
//     file and, on format v3, deletion vectors of removed data files.
//     Delete files that still apply elsewhere (a global equality delete)
//     stay; they never apply to the new files. [Writer.Upsert],
//     [Writer.Recompute] and the rows kept from older-spec files read
//     current rows with their deletes applied. DeletedFiles and
//     DeletedRows of the result count data files only.
//   - Format v3 tables get row lineage: each snapshot's first-row-id and
//     added-rows, a first_row_id per data manifest, the table's
//     next-row-id. Rows of partitions a call does not replace keep their
//     _row_id and _last_updated_sequence_number; rows a call writes get new
//     ids, including the rows an Upsert or an older-spec rewrite carries
//     over unchanged (the spec asks writers to keep those, but does not
//     require it).
//   - Files written under an older partition spec are read to find the rows
//     of the key; that is exact for every transform but costs a read of
//     each older-spec file the key's filter cannot prune.
//   - After a [commit.ErrUnknownOutcome] the new files are kept, since the
//     table may reference them; an orphan cleanup removes them if not.
//   - On a branch, rows routed to the late table go to the same branch of
//     the late table (publish it too); quarantined input goes to the
//     quarantine table's main.
//   - Publishing re-plans icerun's writes only: snapshots other engines
//     committed to the branch are published by a fast-forward only.
//   - Importing the package registers, process-wide, a zstd codec for
//     Parquet pages with arrow-go. It writes the same bytes as arrow-go's
//     own codec, with encoders sized to the page, and it leaves in place a
//     codec that the program registered itself. The README ("One
//     process-wide effect") gives the memory it saves; docs/design.md how
//     it is checked against arrow-go's codec.
package table
