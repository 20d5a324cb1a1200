// Package integration runs icerun's scenarios against real, production-shaped
// components: the SQL catalog on SQLite and on PostgreSQL (bun's pgdriver,
// sql.dialect=postgres), an S3-compatible object store (versitygw) through
// iceberg-go's io/gocloud/s3, and an Iceberg REST catalog (SeaweedFS).
//
// The tests are behind the build tag "integration". scripts/integration
// starts the services, exports their addresses (ICERUN_PG_URI,
// ICERUN_S3_*, ICERUN_REST_*) and runs
//
//	go test -tags integration ./integration/
//
// A target whose variables are absent is skipped, except under CI=true
// (for pg and s3) or when ICERUN_TARGETS names it: then it fails.
//
// Every target runs the same scenarios: replace and rerun (byte-identical),
// dynamic replace, same- and different-partition writers as separate OS
// processes, a writer killed with SIGKILL mid-replace and rerun, a schema
// rename and rerun. The package also holds the stress test, the bad-input
// matrix and the security tests (path traversal, secrets).
package integration
