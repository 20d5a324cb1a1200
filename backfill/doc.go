// Package backfill runs a partition job over many keys: the backfill is a
// loop, and the daily run is the special case of one key.
//
// # Basics
//
// A [Job] returns the rows of one partition key. It must be a function of
// the key and of immutable inputs: the key is its only parameter, and the
// runner passes it; a job that reads the clock would make every key of a
// 400-day backfill produce today's answer. [Run] calls the job for every
// key and replaces the key's partition with its rows through a
// table.Writer, each key (or each group of keys, [WithKeysPerSnapshot]) an
// atomic, idempotent replace:
//
//	keys, _ := spec.Range(first, last)              // partition.Spec.Range: no clock
//	rep, err := backfill.Run(ctx, w, keys, job,
//		backfill.WithWorkers(4),
//		backfill.WithOrder(backfill.Reverse),
//		backfill.WithProgress(func(p backfill.Progress) { ... }))
//
// The keys may run in any order and with any number of workers: the
// table ends byte-identical. A failed group is retried a bounded number of
// times, then the run stops or continues. A run is resumable: it skips
// the keys whose latest write was made by the same code version, read from
// the lineage in the snapshot summaries (table.LastWrites), so a run
// interrupted midway and started again does only what is left.
//
// # Across machines
//
// The writers are stateless: the catalog is the coordinator and the
// object store holds the data, so a backfill scales out as more processes
// against the same catalog. [WithShard](i, n) gives worker i of n its share
// of the keys by a hash of each key's text ([ShardOf]), not by position: a
// longer range keeps every key's worker. Each worker commits its keys
// [WithKeysPerSnapshot] at a time, and resumes from the lineage that every
// worker commits, so a worker killed and started again skips what any
// worker finished. [Report].Conflicts counts the commits that lost a race
// to another worker and were re-planned. The catalog's commit rate is the
// limit: more keys per snapshot means fewer commits for the same keys.
//
// # Metadata hygiene
//
// Each commit adds a snapshot and a metadata.json; manifests stay bounded
// by icerun's commits themselves (package commit). [Hygiene] has old
// metadata.json files deleted (write.metadata.delete-after-commit.enabled
// and write.metadata.previous-versions-max) and can expire snapshots
// during the run (KeepSnapshots: the metadata.json every commit parses
// stays bounded) and after it. Every expiry records the lineage of what it
// expires in the table property commit.PropertyLineage. [Report] has the
// [Stats] before and after.
//
// # Caveats
//
//   - Skipping trusts the lineage: a partition rewritten since by another
//     engine without icerun's summary properties still counts as done.
//   - Expiry frees files incrementally when main is the table's only ref
//     and every snapshot is on its ancestry: manifest lists, manifests only
//     expired snapshots list, and the data files the expired commits (and
//     the oldest kept one) deleted. That relies on a data file path never
//     being added twice, as Iceberg's own incremental cleanup does; with
//     tags or other branches iceberg-go's full cleanup runs instead.
//   - Snapshots expired by other tools take their lineage with them; keys
//     whose only record was there run again on the next SkipDone run (an
//     idempotent, unchanged replace when nothing changed).
//   - Run is safe to call concurrently on different writers; one Run's
//     callbacks are serialised.
package backfill
