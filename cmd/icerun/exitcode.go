package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/catalog"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/kafka"
	"github.com/icerun/icerun/table"
)

// Exit codes, for a scheduler to act on (sysexits.h where one fits).
const (
	exitOK          = 0   // done
	exitFailed      = 1   // an error not classified below: read the message
	exitUsage       = 2   // the command line is wrong: nothing was read or written
	exitRequest     = 64  // the request does not fit the table (key, branch, column, existing table): permanent
	exitData        = 65  // the input is wrong (rows outside the key, nulls, types, unreadable files): permanent
	exitRetry       = 75  // transient (commit conflict, lost connection, unknown outcome): run it again
	exitConfig      = 78  // the catalog or its configuration is wrong or missing: permanent
	exitInterrupted = 130 // stopped by SIGINT: rerun to finish
	exitTerminated  = 143 // stopped by SIGTERM: rerun to finish
)

// exitCodesHelp documents the exit codes in the top-level help.
const exitCodesHelp = `
Exit codes: 0 done; 2 bad command line; 64 the request does not fit the
table (permanent); 65 bad input (permanent); 75 transient, run it again;
78 catalog or configuration (permanent); 130 / 143 stopped by SIGINT /
SIGTERM (what was in flight was abandoned and removed: run it again; the
sink commits what is pending and exits 0); 1 anything else. Reruns are
safe: a partition that already holds its input is left unchanged.
`

// Errors of each class, matched with errors.Is.
var (
	requestErrors = []error{
		partition.ErrMalformedKey, partition.ErrWrongSpec, partition.ErrUnsupportedSpec, partition.ErrInvalidFieldName, table.ErrBadUpsertKey, table.ErrBadWindow, partition.ErrBadRange,
		table.ErrBadBranch, table.ErrBadOption, table.ErrSchemaChange, commit.ErrPublishConflict,
		commit.ErrNoSuchBranch, commit.ErrUnsupported, catalog.ErrNoSuchTable, catalog.ErrTableAlreadyExists,
		catalog.ErrNoSuchNamespace, sink.ErrBadOption,
	}
	dataErrors = []error{
		partition.ErrRowOutside, schema.ErrMissingRequired, schema.ErrIncompatibleType, schema.ErrUnknownField,
		schema.ErrAmbiguousField, table.ErrNilInput, table.ErrLateRows, table.ErrQuarantined,
		table.ErrUnsafePartitionValue, table.ErrDuplicateKey, parquetfile.ErrNoFiles, parquetfile.ErrSchemaMismatch,
		parquetfile.ErrHiveValue, parquetfile.ErrCorrupt, sink.ErrBadMessage, sink.ErrBadRow, os.ErrNotExist,
	}
	configErrors = []error{
		errNoWarehouse, catalogconfig.ErrNoCatalog, catalogconfig.ErrBadConfig, catalogconfig.ErrNoCommitLock,
		os.ErrPermission,
	}
	retryErrors = []error{
		commit.ErrConflict, commit.ErrUnknownOutcome, commit.ErrTableChanged, commit.ErrLock,
		table.ErrIncompleteWrite, context.DeadlineExceeded, kafka.ErrNotConnected,
		// A lost connection, of any catalog driver or storage client.
		io.EOF, io.ErrUnexpectedEOF, driver.ErrBadConn, net.ErrClosed,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT,
		syscall.ENETUNREACH, syscall.ENETDOWN, syscall.EHOSTUNREACH,
	}
	// lostConnection is how a lost connection reads in an error that
	// reached us as text only (a driver or client that did not wrap it).
	lostConnection = []string{
		"driver: bad connection", "connection reset by peer", "broken pipe", "connection refused",
		"use of closed network connection", "unexpected EOF", "i/o timeout",
	}
)

// exitCode classifies err, the error of a command run under ctx.
func exitCode(ctx context.Context, err error) int {
	var sig interruption
	if errors.As(context.Cause(ctx), &sig) {
		return sig.code()
	}
	classes := []struct {
		errs []error
		code int
	}{{requestErrors, exitRequest}, {dataErrors, exitData}, {configErrors, exitConfig}, {retryErrors, exitRetry}}
	for _, c := range classes {
		for _, target := range c.errs {
			if errors.Is(err, target) {
				return c.code
			}
		}
	}
	var pe pgdriver.Error
	if errors.As(err, &pe) {
		switch state := pe.Field('C'); {
		case strings.HasPrefix(state, "28"):
			return exitConfig // PostgreSQL refused the credentials (SQLSTATE class 28)
		case strings.HasPrefix(state, "08"), strings.HasPrefix(state, "57P"):
			return exitRetry // a connection exception, a server shutting down or starting
		}
	}
	var ne net.Error // a dial, read or write of any driver or client
	if errors.As(err, &ne) {
		return exitRetry
	}
	for _, text := range lostConnection {
		if strings.Contains(err.Error(), text) {
			return exitRetry
		}
	}
	return exitFailed
}

// exitHint is what a message says of its exit code.
func exitHint(code int) string {
	switch code {
	case exitRetry:
		return " (transient: exit 75, run it again)"
	case exitInterrupted, exitTerminated:
		return " (stopped: nothing in flight was committed; run it again to finish)"
	}
	return ""
}
