// Package rowdelete locates rows in an Iceberg partition's data files and
// writes the delete files that remove them: the merge-on-read half of
// table's Upsert, Delete, DeleteWhere and ApplyChanges.
//
// # Vocabulary
//
// A row of a data file is named by its position: its 0-based ordinal in
// the file, in file order. A row-level delete removes rows without
// rewriting the data file:
//
//   - A position delete file (format v2 and later) is a Parquet file of
//     (file_path, pos) rows, sorted, each naming one deleted row of one
//     data file. This package writes file-scoped ones: one per data file,
//     its referenced_data_file set, holding every position the file's
//     earlier file-scoped deletes held too, which it supersedes.
//   - A deletion vector (format v3) is a bitmap of the deleted positions
//     of one data file (a roaring bitmap, the deletion-vector-v1 blob of a
//     Puffin file). A data file has at most one: a new vector holds the
//     old one's positions and position deletes, and supersedes it.
//   - An equality delete file removes rows by column values, not by
//     position; positions alone then do not say which rows are live, so a
//     partition with one is refused ([ErrEqualityDeletes]) and the caller
//     writes it copy-on-write.
//
// # Locating rows
//
// A [Matcher] says which rows a change removes: [Matcher.MayHold] skips a
// data file unread (by its column bounds), [Matcher.Match] picks rows of a
// batch. A [Locator] reads only the matcher's columns of each candidate
// file, every row in file order with no delete applied, so that a row's
// ordinal is its position; it drops the positions the file's deletion
// vector and position delete files already delete, and returns the live
// positions picked ([Located]). Files are read in parallel, up to
// GOMAXPROCS, with the result of reading them one by one in task order.
// With [Locator.KeepRowIDs] it also notes each picked row's _row_id (row
// lineage), which the row's replacement keeps. A [Placed] matcher, which
// knows where its rows are from a read of the same table state, spares
// the Locator the read of a file (unless the file may hold explicit
// _row_id values).
//
// [Deletes] reads which positions of a data file its delete files
// delete, for the Locator and for a caller that reads data files bare.
// Delete files never change once written, so the position delete files
// this process wrote or read last are kept in memory (a bounded cache,
// least recently used out first) and not decoded again. A position
// delete file is decoded in batches of 64K rows, never whole: its
// file_path column as a dictionary (one value per data file it names),
// and only its pos column when it is file-scoped (its
// referenced_data_file, or equal bounds on file_path), so the memory
// it takes is its positions, 8 bytes each. A [Writer] then writes the
// delete files of one partition for what was located: deletion vectors
// on v3, file-scoped position delete files on v2, named after fresh UUIDs
// in the partition's data folder; nothing is committed here (the caller
// commits them as a row delta, or removes them with [Writer.Remove]).
//
// Neither type is safe for concurrent use; a Locator runs its own
// goroutines, each with a [Matcher.Fork], and they end before Locate
// returns.
package rowdelete
