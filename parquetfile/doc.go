// Package parquetfile reads Parquet files as one streaming Arrow
// [array.RecordReader], the input that [github.com/icerun/icerun/table]'s
// replacements take. [Open] accepts files and folders: a folder is read
// recursively, its .parquet files in name order, so Hive-style layouts
// (DuckDB's COPY ... PARTITION_BY (event_date) writes
// event_date=2026-07-14/data_0.parquet) open as they are. Hive folders
// name a value that such files leave out; [Reader.Hive] reports them,
// [WithHiveColumns] adds such a column with each file's own folder value
// ([FolderColumns] infers the columns' types as DuckDB and Spark do), and
// [WithConstant] adds a column that the files lack with one value
// (cmd/icerun fills an identity partition column from the key this way).
// [Reader.Position] names the file and the row of a batch's row, for
// errors about one row.
//
// Batches are streamed: one file is open at a time and a batch is never
// held after the next call to Next. Every file must have the same Arrow
// schema ([ErrSchemaMismatch]). The memory of a batch is reused for later
// batches once the batch is released (by Next, or by the caller's last
// Release of a batch it retained), as Arrow's contract allows: a caller
// that keeps values beyond that copies them, or retains the batch.
// Reusing it spares each batch fresh memory and the collections that
// follow ([WithAllocator] changes it).
//
// [Identity] is a content identity of the input (paths, sizes and a
// SHA-256 of the bytes), which a backfill records to notice corrected
// input.
package parquetfile
