// Package sink is an idempotent streaming sink: it appends rows that
// arrive at least once from a source (a Kafka topic, a queue, a log) to an
// Iceberg table so that every message is in the table exactly once.
//
// # Basics
//
// The caller hands [Sink.Write] Arrow records with their source positions:
// a [SourcePartition] (the source's name and one of its partitions) and
// one offset per row, increasing within the partition. The sink writes the
// rows to Parquet data files as they arrive, and [Sink.Commit] (or the
// cadence of [WithCommitRows], [WithCommitBytes] and [WithCommitInterval])
// publishes them in one Iceberg snapshot (operation append) whose summary
// property [SummaryPositions] records, for every source partition of the
// table, the highest offset the table contains: the rows and the positions
// land in the same atomic catalog commit.
//
// A row at or below a committed position is dropped when it is delivered
// again. A restarted sink, or the new owner of a source partition after a
// rebalance, calls [Sink.Start] and resumes the source one past the
// positions it returns: they come from the table, never from the source's
// own bookkeeping (a broker's committed offsets may be ahead of the table
// or behind it). So a crash at any instant leaves the table with every
// delivered message at most once, and the replay from [Sink.Start] makes
// it exactly once: before the commit lands, nothing of the batch is
// visible and its positions are not recorded; after, its positions are.
//
// Several sinks (threads or processes) may append to one table at once,
// each owning some source partitions. A sink that loses the commit race
// plans its append again on the new table state and retries; an append
// only adds files, so the sinks never fail each other. A sink whose source
// partition was committed by someone else since it started it (a zombie
// after a rebalance) fails with [ErrFenced] and commits nothing.
//
// # Event time
//
// With [WithEventTime] the sink tracks, per source partition, the maximum
// event time it has seen (recorded in the summary with the offset, so that
// a replay classifies every row as the first delivery did). A row is late
// when the table partition its event time falls in ended before that
// maximum minus the allowed lateness. [WithLateRows] takes the table's
// late-row policy (table.LatePolicy): late rows go to a side table
// (table.StreamLateTable) with the reason and their source position (the
// default), are dropped, or fail the write as bad rows, and are counted in
// [Stats]. When a partition closes,
// [Sink.Compact] rewrites its small files into target-size ones with the
// table's compaction: the same live rows, checked, in a commit that
// removes exactly the data and delete files it read, planned again when
// another writer changed the partition meanwhile.
//
// # Keyed mode
//
// With [WithKey] business key columns (such as the deterministic ids of
// package recordid, with the partition's source columns on a partitioned
// table, so that a key determines its partition) dedupe a producer's own
// duplicates that arrive with new offsets, on any source partition, within
// a commit and against the rows the table holds, including those other sinks commit meanwhile
// ([ErrKeyCommitted]); see [WithKey] for its cost.
//
// # Upsert mode
//
// With [WithUpsert] the table keeps the latest state of each key: each
// commit applies the pending rows as one table.Writer.ApplyChanges call,
// ordered by the change spec's columns against the rows the table holds
// and the tombstones of deleted keys, its snapshot recording the
// positions as an append's does.
//
// # Fleets: many sinks, one commit per interval
//
// With [WithHandOver] a sink is a member of a fleet: it writes as a lone
// sink does but never commits; [Sink.HandOver] hands its data files (in
// upsert and keyed mode its rows, as a [ChangeFile]) over, with the range
// of offsets they hold per source partition, and one [Committer] lands
// the hand-overs of every member in one snapshot per round. A hand-over
// lands only when each of its ranges starts one past the position the
// table holds, so exactly-once stays a property of the table whatever
// the committers and the control channel do. Files: member.go (the
// member), handover.go (the hand-over and its wire form), committer.go
// (planning a round and the append), committer_upsert.go and
// committer_keyed.go (the other two modes), changefile.go; the Kafka
// wiring (a control topic, the committer elected by the group) is
// sink/kafka's fleet.go.
//
// # Sources without positions
//
// An [Ingester] is the front of a sink for sources that retry instead of
// replaying from a position (HTTP, gRPC): safe for concurrent use, it
// takes records from many goroutines, group-commits them on the sink's
// cadence, and returns to each caller once its rows are committed, with
// keyed mode on a deterministic id (package recordid) as the dedupe.
//
// # Small files
//
// [WithSmallFileCompaction] compacts a partition once the sink has
// committed a number of small files to it, so a stream without event
// time (or an unpartitioned table) keeps its file count bounded.
//
// # Dead letters
//
// A message the caller cannot turn into a row goes to [Sink.Reject]: to the
// dead-letter table of [WithDeadLetter] with its bytes, reason and
// position, exactly once like a row; without one, Reject fails with a
// [BadMessageError] and the stream stops at the message.
//
// # Schema evolution
//
// [Sink.AddColumns] adds optional top-level columns for fields the
// messages carry and the table lacks, and optional fields to struct
// columns (at any depth, also in lists and maps of structs) for fields
// inside them the structs lack: it commits the pending rows, then
// the schema change in a commit of its own (table.Writer.AddColumns, with
// the diff and fit rules of package schema), and writes for the new
// schema from then on; rows committed before read null. Sinks racing to
// add the same column or field all succeed (one of a type the new one
// fits, by schema.Fits, is accepted; another type fails with
// table.ErrSchemaChange). A sink whose
// pending rows were written for the schema another sink just replaced
// fails its commit with [ErrSchemaChanged] and resumes from [Sink.Start].
//
// # Caveats
//
//   - Positions are read from the newest snapshot on main that records
//     them, else (after expiry) from the table property [PropertyPositions]
//     that every sink commit sets too.
//   - Every commit's metadata lists every snapshot: the sink expires
//     snapshots by default ([DefaultKeepSnapshots], [WithSnapshotExpiry]).
//   - A Sink is not safe for concurrent use; run one per goroutine, or
//     put an [Ingester] in front of it.
//   - Files of a batch that never committed (a crash) are orphans until
//     cleanup.Orphans removes them; they are never visible to readers.
package sink
