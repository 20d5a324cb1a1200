package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal"
)

// jsonLines parses every line of stderr as a JSON record; a line that is
// not one fails the test.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "a line that is not JSON: %q in\n%s", line, stderr)
		recs = append(recs, rec)
	}
	return recs
}

// unquoted is stderr with the quotes inside the text records' quoted
// values unescaped (\" is "), so that a test finds the error's text in
// the sink's text log as in a plain line.
func unquoted(stderr string) string { return strings.ReplaceAll(stderr, `\"`, `"`) }

// requireFailureRecord checks that rec is the ERROR record of a run of
// cmd that exited with code, its error containing want.
func requireFailureRecord(t *testing.T, rec map[string]any, cmd string, code int, want string) {
	t.Helper()
	require.Equal(t, "ERROR", rec["level"], "%v", rec)
	require.Equal(t, cmd, rec["command"], "%v", rec)
	require.Equal(t, float64(code), rec["exit_code"], "%v", rec)
	require.Contains(t, rec["error"], want, "%v", rec)
}

// Every command takes -log-format.
func TestEveryCommandHasLogFormat(t *testing.T) {
	for _, c := range commands {
		code, out, errs := icerun(c.name, "-h")
		require.Equal(t, exitOK, code, "%s: %s", c.name, errs)
		require.Contains(t, out, "-log-format", "icerun %s -h", c.name)
		require.Empty(t, errs, "help is plain text on stdout")
	}
}

// With -log-format json a failing command writes only JSON records on
// stderr, the last the error with its exit code: a missing table, bad
// flags (before and after -log-format, so found without the flags
// parsed), a bad sink flag value.
func TestLogFormatJSONFailure(t *testing.T) {
	wh := warehouse(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replace", "db.missing", "-warehouse", wh, "-key", "event_date=2026-07-14", "x.parquet", "-log-format", "json"}, exitRequest, "db.missing"},
		{[]string{"describe", "db.missing", "-log-format=json", "-warehouse", wh}, exitRequest, "db.missing"},
		{[]string{"sink", "db.fact_orders", "-log-format", "json", "-no-such-flag"}, exitUsage, "no-such-flag"},
		{[]string{"sink", "db.fact_orders", "-no-such-flag", "-log-format", "json"}, exitUsage, "no-such-flag"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-log-format", "json", "-brokers", "b:9092", "-topic", "t", "-group", "g", "-connect-timeout", "-1s"}, exitUsage, "-connect-timeout"},
		{[]string{"version", "-log-format", "json", "extra"}, exitUsage, "extra"},
	} {
		code, out, errs := icerun(tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errs)
		require.Empty(t, out, "%v", tc.args)
		recs := jsonLines(t, errs)
		requireFailureRecord(t, recs[len(recs)-1], tc.args[0], tc.code, tc.want)
	}
}

// ICERUN_LOG_FORMAT sets the format of every command; -log-format none
// keeps the plain line.
func TestLogFormatEnv(t *testing.T) {
	wh := warehouse(t)
	t.Setenv("ICERUN_LOG_FORMAT", "json")
	code, _, errs := icerun("describe", "db.missing", "-warehouse", wh)
	require.Equal(t, exitRequest, code, errs)
	recs := jsonLines(t, errs)
	requireFailureRecord(t, recs[len(recs)-1], "describe", exitRequest, "db.missing")

	code, _, errs = icerun("describe", "db.missing", "-warehouse", wh, "-log-format", "none")
	require.Equal(t, exitRequest, code, errs)
	require.True(t, strings.HasPrefix(errs, "icerun describe: "), "the plain line: %q", errs)
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
}

// The notes and progress lines of a command go through the logger too.
func TestLogFormatNotesAndProgress(t *testing.T) {
	wh := warehouse(t)
	cat, err := internal.OpenSQLite(context.Background(), wh)
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(context.Background(), icetable.Identifier{"empty"}, nil))

	code, out, errs := icerun("list", "empty", "-warehouse", wh, "-log-format", "json")
	require.Equal(t, exitOK, code, errs)
	require.Empty(t, out)
	recs := jsonLines(t, errs)
	require.Len(t, recs, 1, errs)
	require.Equal(t, "INFO", recs[0]["level"])
	require.Contains(t, recs[0]["msg"], "no table in namespace empty")

	code, _, errs = icerun("expire", "db.fact_orders", "-warehouse", wh, "-log-format", "json")
	require.Equal(t, exitOK, code, errs)
	var progress []map[string]any
	for _, rec := range jsonLines(t, errs) {
		if rec["command"] == "expire" {
			progress = append(progress, rec)
		}
	}
	require.Len(t, progress, 2, "the two progress records: %s", errs)
	require.Equal(t, float64(1), progress[1]["done"], errs)

	code, _, errs = icerun("list", "empty", "-warehouse", wh)
	require.Equal(t, exitOK, code, errs)
	require.True(t, strings.HasPrefix(errs, "no table in namespace empty"), "plain by default: %q", errs)
}

// With a logger the note of a signal is a record of it.
func TestSignalNoteLogged(t *testing.T) {
	var buf bytes.Buffer
	ctx, stop := notifySignals(context.Background(), "stopping", slog.New(slog.NewJSONHandler(&buf, nil)))
	defer stop()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	<-ctx.Done()
	recs := jsonLines(t, buf.String())
	require.Len(t, recs, 1)
	require.Equal(t, "SIGTERM", recs[0]["signal"])
	require.Equal(t, "INFO", recs[0]["level"])
}

// The format of a run is found in its arguments before they are parsed.
func TestLogFormatArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"t", "-x"}, "none"},
		{[]string{"-log-format", "json"}, "json"},
		{[]string{"--log-format=text", "-bad"}, "text"},
		{[]string{"-log-format", "json", "-log-format", "text"}, "text"},
		{[]string{"--", "-log-format", "json"}, "none"},
	} {
		require.Equal(t, tc.want, logFormatArg(tc.args, "none"), "%v", tc.args)
	}
}

// A failed metrics export is a WARN record of the run's logger.
func TestLogFormatMetricsWarning(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	code, _, errs := icerun("version", "-log-format", "json")
	require.Equal(t, exitOK, code, errs)
	recs := jsonLines(t, errs)
	require.Len(t, recs, 1, errs)
	require.Equal(t, "WARN", recs[0]["level"], errs)
	require.Equal(t, "version", recs[0]["command"], errs)
	require.NotEmpty(t, recs[0]["error"], errs)
}
