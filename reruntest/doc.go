// Package reruntest checks that a pipeline is safe to rerun: that a run
// killed partway, then run again, leaves its tables exactly as one clean
// run does.
//
// # Basics
//
// Give [Check] a [Config]: a Setup that creates the pipeline's tables in a
// catalog, a Run that is one run of the pipeline against that catalog,
// and the tables to compare. Check then, each time on a fresh embedded
// catalog (SQLite over a temporary folder):
//
//  1. runs the pipeline once cleanly, and keeps a canonical scan of every
//     table (rows as text, sorted) as the reference;
//  2. for every [Fault] and several K: runs the pipeline once cleanly, runs
//     it again with the fault injected at the K-th operation (a file
//     write through a table's IO, or a catalog commit), then runs it again
//     to completion, and compares every table's canonical scan with the
//     reference byte for byte, reporting the first differing row;
//  3. does the same when the failure hits the very first run.
//
// K grows until the fault no longer fires within a run, so every
// operation of a short pipeline is a crash point. When a table lists Key
// columns, Check also fails when two rows share a key.
//
// A pipeline that appends, or increments a total from its previous value,
// fails the check (the reference is one run; the checked table has seen
// two or three). A pipeline that replaces partitions, upserts by
// deterministic keys and recomputes aggregates from its raw tables
// passes.
//
// # Caveats
//
// The pipeline must reach every table through the catalog it is given:
// tables loaded from it write through the fault-injecting IO and commit
// through the fault-injecting catalog. Anything it reads from elsewhere
// must be the same in every run, and it must be safe to run from several
// goroutines on different catalogs. Check runs the pipeline about
// 3 x (faults x K + 1) times, one chain of K per fault at once: keep test
// inputs small.
package reruntest
