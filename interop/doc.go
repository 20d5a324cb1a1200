// Package interop is the proof that the reference engines read exactly what
// icerun writes: tables written through [github.com/icerun/icerun/table] are
// read back by Spark (Java Iceberg, through the iceberg-spark-runtime jar)
// and by PyIceberg, on the very catalog icerun committed to, and compared
// row by row with the rows icerun was given.
//
// The suite is built only with the interop build tag, so that a plain
// go test ./... needs no engines:
//
//	eval "$(scripts/engines)"            # installs Spark + PyIceberg, exports ICERUN_PYTHON, ICERUN_SPARK_JARS
//	go test -tags interop ./interop/     # the embedded SQLite catalog, warehouse on disk
//	scripts/integration pg s3 -- go test -tags interop ./interop/   # also PostgreSQL and S3
//
// Without ICERUN_PYTHON and ICERUN_SPARK_JARS the tests skip with a message,
// except under CI=true where they fail.
//
// # Harness
//
// The engines are internal/enginestest's: one Python process per test
// binary (its engines.py, started on first use and stopped by TestMain)
// holds ONE Spark session (local[2]) and PyIceberg, driven over
// stdin/stdout with JSON lines. [Engines] is that client with the suite's
// catalogs: [Engines.SparkSQL], [Engines.PyIcebergScan], [Engines.Inspect]
// and [Engines.Batch] come from the client; [Engines.NewCatalog] opens a
// fresh catalog for one test on one target (embedded SQLite, PostgreSQL,
// S3, PostgreSQL+S3, REST) under a name of its own, and registers the same
// catalog under that name in Spark (Java's JdbcCatalog,
// jdbc.schema-version=V1, or its RESTCatalog) and in PyIceberg (its
// SqlCatalog or RestCatalog). The name
// matters: the catalog_name column of iceberg_tables must equal the Spark
// catalog's name, and Spark caches a catalog by name, so a fresh name per
// test lets one JVM serve every test.
//
// Values cross the pipe as typed strings ([Row]), lossless: NaN and -0.0
// keep their bits, decimals their scale, timestamps are microseconds.
// [RowsOf] encodes icerun's Arrow input the same way and [SameRows]
// compares two multisets of rows.
package interop
