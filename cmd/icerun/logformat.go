package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// The log format (-log-format, ICERUN_LOG_FORMAT) of every command: text
// or json sends every line a command writes on stderr through one slog
// logger, its final error too (see failure), so that a log collector
// reads nothing else; none keeps plain lines for a person at a terminal.
// Help (-h) is no log: it stays plain text.
const (
	logNone = "none"
	logText = "text"
	logJSON = "json"
)

// defaultLogFormat is the format of a command run without -log-format
// and ICERUN_LOG_FORMAT: text for the sink, a service whose log is
// collected, none for the others.
func defaultLogFormat(cmd string) string {
	if cmd == "sink" {
		return logText
	}
	return logNone
}

// logFlag adds -log-format, which every command has (flags and flagsOnly
// add it).
func (e *env) logFlag(fs *flag.FlagSet) {
	def := envOr("ICERUN_LOG_FORMAT", defaultLogFormat(e.cmd.name))
	fs.StringVar(&e.logFormat, "log-format", def, "stderr as slog records, text or json (commit attempts, progress, notes, the final error with its exit code), or none: plain lines (ICERUN_LOG_FORMAT)")
}

// logFormatArg is the value of the last -log-format among args, or def.
// It finds the format of a run whose flags did not parse.
func logFormatArg(args []string, def string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "log-format" {
			continue
		}
		switch {
		case hasVal:
			def = val
		case i+1 < len(args):
			def = args[i+1]
		}
	}
	return def
}

// newLogger is the logger of format on w, or nil for none.
func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "", logNone:
		return nil, nil
	case logText:
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case logJSON:
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("%w: -log-format %q: want text, json or none", errUsage, format)
}

// logger is the -log-format logger, or nil for none. It is made once per
// format, so that the table's records, the notes and the final error go
// through the same logger.
func (e *env) logger() (*slog.Logger, error) {
	if e.log != nil && e.logMadeFor == e.logFormat {
		return e.log, nil
	}
	log, err := newLogger(e.logFormat, e.err)
	if err != nil {
		return nil, err
	}
	e.log, e.logMadeFor = log, e.logFormat
	return log, nil
}

// note writes one line of information about the run on stderr: a record
// of the logger, or the plain line with none (or a bad -log-format, which
// the command reports).
func (e *env) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if log, _ := e.logger(); log != nil {
		log.Info(msg, slog.String("command", e.cmd.name))
		return
	}
	fmt.Fprintln(e.err, msg)
}

// failure reports the run's last line on stderr: the error (line, plain)
// and the exit code, as one ERROR record of the logger of the run's
// format, or as line with none.
func (e *env) failure(args []string, line string, code int, err error) {
	e.logFormat = logFormatArg(args, e.logFormat)
	line = oneLine(line)
	log, lerr := e.logger()
	if lerr != nil || log == nil {
		fmt.Fprintln(e.err, line)
		return
	}
	log.Error(line, slog.String("command", e.cmd.name), slog.Int("exit_code", code), slog.String("error", oneLine(e.redact(err.Error()))))
}

// signalLogger is the logger of the run of args on os.Stderr, for the
// signal notes written before the command parsed its flags; nil for none.
func signalLogger(args []string) *slog.Logger {
	if len(args) == 0 {
		return nil
	}
	log, _ := newLogger(logFormatArg(args[1:], envOr("ICERUN_LOG_FORMAT", defaultLogFormat(args[0]))), os.Stderr)
	return log
}
