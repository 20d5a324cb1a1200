// Package spillsort sorts more rows than fit in memory: the rows of one
// write, added batch by batch, come out in one order, with memory bounded
// by the run size.
//
// # Basics
//
// A [Sorter] collects the batches passed to [Sorter.Add] into a run of at
// most [Config.RunRows] rows. A full run is sorted (stably, by
// [Config.Compare]) and spilled: written to a run file, an Arrow IPC file
// under [Config.Dir], and the memory it held is released. IPC because a
// run is read once, by the merge, and Parquet's encoding would cost as
// much as the write itself. [Sorter.Drain] sorts the last run, kept in
// memory, and merges it with the spilled runs: the rows are emitted in
// order in batches of at most [Config.BatchRows] rows. Rows that compare
// equal keep the order they were added in within a run; across runs the
// merge takes the earliest run first.
//
// With no run spilled, Drain emits the one sorted run and no file is ever
// written.
//
// # Vocabulary
//
//   - run: a sequence of rows in order; every run but the last is in a run
//     file, named icerun-sort-run-<uuid>.arrow.
//   - spill: sorting the rows collected so far and writing them as a run.
//   - merge: emitting the rows of every run in order, each output batch
//     built from contiguous row ranges of the run batches it takes rows
//     from.
//
// # Caveats
//
// Run files are never committed to a table: [Sorter.Release] removes
// every one, also when the context is canceled, and must be called once
// the sorter is done with, whether Drain ran or not. A crash before
// Release leaves run files behind, which an orphan cleanup removes.
//
// A Sorter is not safe for concurrent use.
package spillsort
