package main

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/parquetfile"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/kafka"
)

// A lost connection of any catalog driver or storage client is
// transient (exit 75), however it is wrapped (run classifies the error
// of every command with exitCode).
func TestExitCodeLostConnection(t *testing.T) {
	load := func(err error) error { return fmt.Errorf("table: replace db.t/k: load table: %w", err) }
	op := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	for _, err := range []error{
		load(io.EOF), // PostgreSQL's connection dropped mid-run
		load(io.ErrUnexpectedEOF),
		load(driver.ErrBadConn),
		load(net.ErrClosed),
		load(op(syscall.ECONNRESET)),
		load(op(syscall.EPIPE)),
		load(op(syscall.ECONNABORTED)),
		load(op(syscall.ENETUNREACH)),
		load(op(syscall.EHOSTUNREACH)),
		load(os.NewSyscallError("write", syscall.EPIPE)),
		load(&net.DNSError{Err: "server misbehaving", Name: "pg", IsTemporary: true}),
		// flattened to text by a driver or client that did not wrap it
		load(errors.New("driver: bad connection")),
		load(errors.New("read tcp 10.0.0.1:5432: read: connection reset by peer")),
		load(errors.New("write tcp 10.0.0.1:5432: write: broken pipe")),
		load(errors.New("Post \"http://rest/v1/tables\": unexpected EOF")),
	} {
		if got := exitCode(context.Background(), err); got != exitRetry {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, exitRetry)
		}
	}
	// A class the error names first wins: a truncated file stays bad input.
	if got := exitCode(context.Background(), fmt.Errorf("%w: %w", parquetfile.ErrCorrupt, io.ErrUnexpectedEOF)); got != exitData {
		t.Errorf("exitCode(corrupt file, unexpected EOF) = %d, want %d", got, exitData)
	}
}

func TestExitCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("table: replace db.t/k: %w", err) }
	tests := []struct {
		err  error
		want int
	}{
		{wrap(commit.ErrConflict), exitRetry},
		{wrap(commit.ErrUnknownOutcome), exitRetry},
		{wrap(syscall.ECONNREFUSED), exitRetry},
		{wrap(partition.ErrRowOutside), exitData},
		{wrap(schema.ErrMissingRequired), exitData},
		{wrap(os.ErrNotExist), exitData},
		{wrap(parquetfile.ErrCorrupt), exitData},
		{fmt.Errorf("kafka: %w", &sink.RowError{Row: 3, Err: schema.ErrIncompatibleType}), exitData},
		{fmt.Errorf("kafka: %w", &sink.BadMessageError{Table: "db.t", Offset: 7}), exitData},
		{wrap(partition.ErrMalformedKey), exitRequest},
		{wrap(partition.ErrUnsupportedSpec), exitRequest},
		{wrap(partition.ErrInvalidFieldName), exitRequest},
		{wrap(catalog.ErrNoSuchTable), exitRequest},
		{wrap(commit.ErrPublishConflict), exitRequest},
		{fmt.Errorf("sink: db.t: %w: note is string", sink.ErrColumnConflict), exitRequest},
		{fmt.Errorf("sink: %w: %w", sink.ErrSchemaChanged, commit.ErrTableChanged), exitRetry},
		{fmt.Errorf("sink: %w: key column %q is not in table db.t", sink.ErrBadOption, "nope"), exitRequest},
		{fmt.Errorf("%w: brokers 127.0.0.1:1 unreachable (gave up after 1m0s)", kafka.ErrNotConnected), exitRetry},
		{wrap(catalogconfig.ErrNoCatalog), exitConfig},
		{wrap(errNoWarehouse), exitConfig},
		{errors.New("something else"), exitFailed},
	}
	for _, tt := range tests {
		if got := exitCode(context.Background(), tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
	for sig, want := range map[os.Signal]int{os.Interrupt: exitInterrupted, syscall.SIGTERM: exitTerminated} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(interruption{sig})
		if got := exitCode(ctx, wrap(context.Canceled)); got != want {
			t.Errorf("exitCode after %v = %d, want %d", sig, got, want)
		}
	}
}

// Commands other than create never create the embedded catalog: in a
// folder without one they fail with exit 78, name the catalog.db they
// looked for, and leave the folder as it was.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "warehouse")
	for _, c := range commands {
		if c.name == "create" || c.name == "version" {
			continue
		}
		args := []string{c.name, "shop.orders", "-warehouse", wh}
		if c.name == "list" {
			args = []string{c.name, "-warehouse", wh}
		}
		code, _, errs := icerun(args...)
		if code == exitUsage {
			continue // refused its command line before any catalog: nothing created either
		}
		require.Equal(t, exitConfig, code, "%s: %s", c.name, errs)
		require.Contains(t, errs, filepath.Join(wh, "catalog.db"), c.name)
		require.NoDirExists(t, wh, "%s created the warehouse", c.name)
	}
	// Commands that need more than the table are refused before: run them whole.
	for _, args := range [][]string{
		{"replace", "shop.orders", "-key", "event_date=2026-07-14", "x.parquet"},
		{"backfill", "shop.orders", "-dir", dir, "-from", "event_date=2026-07-14", "-to", "event_date=2026-07-14"},
		{"history", "shop.orders", "event_date=2026-07-14"},
		{"plan", "shop.orders", "-key", "event_date=2026-07-14"},
		{"publish", "shop.orders", "-branch", "b"},
	} {
		code, _, errs := icerun(append(args, "-warehouse", wh)...)
		require.Equal(t, exitConfig, code, "%v: %s", args, errs)
		require.NoDirExists(t, wh)
	}
}

// A missing table is named namespace.name, with the catalog it was
// looked up in.
func TestMissingTableNamesCatalog(t *testing.T) {
	wh := warehouse(t)
	code, _, errs := icerun("describe", "shop.nope", "-warehouse", wh)
	require.Equal(t, exitRequest, code)
	require.Contains(t, errs, "shop.nope in the embedded catalog at "+filepath.Join(wh, "catalog.db"))
	require.NotContains(t, errs, "[shop nope]")
	code, _, errs = icerun("replace", "shop.nope", "-warehouse", wh, "-key", "event_date=2026-07-14", "x.parquet")
	require.Equal(t, exitRequest, code)
	require.True(t, strings.Contains(errs, "shop.nope in the embedded catalog"), errs)
}
