// Package enginestest is the client of the reference engines for icerun's
// test suites: one Python process (engines.py, in this folder) that holds
// ONE Spark session (Java Iceberg, through the iceberg-spark-runtime jar,
// local[2]) and PyIceberg, driven over stdin/stdout with JSON lines. The
// interop suite (-tags interop) and the integration suite (-tags
// integration) read icerun's tables with it.
//
// # Vocabulary
//
//   - The engines: the process and its [Engines] client, one per test
//     binary, started by the first [Get] and ended by [Stop] (the suite's
//     TestMain calls it). Requests are served one at a time.
//   - A request ([Request]): one op of engines.py (spark_sql,
//     pyiceberg_scan, pyiceberg_inspect, configure_catalog, batch), built
//     with [SparkSQL], [PyIcebergScan] and [Inspect]; [Engines.Batch] sends
//     several in one round trip.
//   - A catalog is registered under one name in both engines
//     ([Engines.Configure]). The name must equal the catalog_name column of
//     iceberg_tables, and Spark keeps a catalog by name for the life of the
//     session, so a name is configured once per process (Configure fails on
//     the same name with other properties). [LocalCatalog] is the
//     configuration of icerun's embedded SQLite catalog; [SparkJDBC] that
//     of any SQL catalog.
//   - Values cross the pipe as typed strings ([Row]), lossless: "null",
//     "i:42", "f:<16 hex digits of the float64 bits>", "d:12.50", "s:text",
//     "date:<days since epoch>", "ts:<micros>", ...; structs are maps,
//     lists are slices (engines.py's doc has the full list).
//
// # Engines missing
//
// [Get] needs ICERUN_PYTHON and ICERUN_SPARK_JARS (eval "$(scripts/engines)"
// installs the engines and sets them). Without them it skips the test with
// [ErrNoEngines], or fails it under CI=true ([catalogtest.Refused]).
package enginestest
