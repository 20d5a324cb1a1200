package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/catalogconfig/awsconfig"
	"github.com/icerun/icerun/table"
)

// env is what every command shares: output and the catalog flags.
type env struct {
	cmd      *command
	out, err io.Writer

	warehouse, catalogName        string
	tableName, runID, codeVersion string
	logFormat                     string            // -log-format
	log                           *slog.Logger      // of logFormat, made by logger
	logMadeFor                    string            // the logFormat of log
	props                         map[string]string // of the named catalog, for redaction
	branch                        string            // -branch of a writing command; "" is main
	commitLock                    bool              // -commit-lock
	mayCreate                     bool              // the command may create the embedded catalog (create)
	closers                       []func() error    // run when the command returns
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// flags returns the command's flag set with the catalog flags.
func (e *env) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(e.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.warehouse, "warehouse", envOr("ICERUN_WAREHOUSE", catalogconfig.DefaultWarehouse), "folder of the embedded catalog (ICERUN_WAREHOUSE)")
	fs.StringVar(&e.catalogName, "catalog", os.Getenv("ICERUN_CATALOG"), "named catalog of ~/.icerun.yaml ($ICERUN_CONFIG) and ICERUN_CATALOG__<NAME>__<KEY> (ICERUN_CATALOG; default: the embedded one)")
	e.logFlag(fs)
	return fs
}

// tableFlags returns flags() with -table, for the commands of one table.
func (e *env) tableFlags() *flag.FlagSet {
	fs := e.flags()
	fs.StringVar(&e.tableName, "table", os.Getenv("ICERUN_TABLE"), "table, namespace.name, instead of the first argument (ICERUN_TABLE)")
	return fs
}

// writeFlags adds the flags of the commands that commit.
func (e *env) writeFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.runID, "run-id", os.Getenv("ICERUN_RUN_ID"), "run id recorded in the snapshots (ICERUN_RUN_ID; default: random)")
	fs.StringVar(&e.codeVersion, "code-version", envOr("ICERUN_CODE_VERSION", table.DefaultCodeVersion), "code version recorded in the snapshots, e.g. a git commit (ICERUN_CODE_VERSION)")
}

// fileFlag adds the repeatable -file of the commands that read Parquet
// input; the names the shell hands the command after the table (a glob)
// are added to it by parse.
func fileFlag(fs *flag.FlagSet, paths *stringList, what string) {
	fs.Var(paths, "file", what+" `PATH` (repeatable; names after the table are files too, so a shell glob works; folders are read recursively, Hive col=value folders included)")
}

// parse parses args: flags, the table (the first argument that is not a
// flag, unless -table was given) and the other arguments, which it
// returns in order. Flags may come before and after arguments. -h prints
// the usage to stdout; a bad flag is a usage error.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				e.printHelp(fs)
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	tableSet := false
	fs.Visit(func(f *flag.Flag) { tableSet = tableSet || f.Name == "table" })
	if fs.Lookup("table") != nil && !tableSet && len(rest) > 0 && looksLikeTable(rest[0]) {
		e.tableName, rest = rest[0], rest[1:]
	}
	return rest, nil
}

// printHelp prints the command's usage and flags to stdout.
func (e *env) printHelp(fs *flag.FlagSet) {
	fmt.Fprintf(e.out, "usage: icerun %s %s\n\n%s.\n\nflags:\n", e.cmd.name, e.cmd.args, e.cmd.summary)
	fs.SetOutput(e.out)
	fs.PrintDefaults()
}

// looksLikeTable reports whether an argument can be a table name rather
// than a file or key: namespace.name with no '/', '=' or .parquet.
func looksLikeTable(s string) bool {
	return !strings.HasPrefix(s, "-") && !strings.ContainsAny(s, "=/\\") && !strings.HasSuffix(s, ".parquet")
}

// noArgs refuses arguments a command does not use.
func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q (this command takes no further arguments; quote values that hold spaces)", errUsage, rest[0])
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// errNoWarehouse: the embedded catalog does not exist where the command
// looked, and the command does not create it.
var errNoWarehouse = errors.New("no embedded catalog")

// where names the selected catalog and its location, for messages.
func (e *env) where() string {
	if e.catalogName == "" {
		abs, err := filepath.Abs(e.warehouse)
		if err != nil {
			abs = e.warehouse
		}
		return "the embedded catalog at " + filepath.Join(abs, "catalog.db")
	}
	if uri := e.props["uri"]; uri != "" {
		return fmt.Sprintf("catalog %q (%s, %s)", e.catalogName, e.props["type"], e.redact(uri))
	}
	return fmt.Sprintf("catalog %q", e.catalogName)
}

// catalog opens the selected catalog. The context it returns carries the
// catalog's AWS configuration, parsed once (see awsconfig); the command
// uses it from then on. Only a command with mayCreate creates the
// embedded catalog; the others refuse a folder without one.
func (e *env) catalog(ctx context.Context) (context.Context, catalog.Catalog, error) {
	if e.catalogName == "" {
		db := filepath.Join(e.warehouse, "catalog.db")
		if _, err := os.Stat(db); err != nil && !e.mayCreate {
			return ctx, nil, fmt.Errorf("%w: %s does not exist (create a table with icerun create, or point -warehouse / ICERUN_WAREHOUSE or -catalog at your catalog)", errNoWarehouse, e.where())
		}
		cat, err := catalogconfig.OpenLocal(ctx, e.warehouse)
		return ctx, cat, err
	}
	cfg, err := catalogconfig.Load()
	if err != nil {
		return ctx, nil, err
	}
	if p, err := cfg.Properties(e.catalogName); err == nil {
		e.props = p
		if p["type"] != "rest" { // a REST catalog's tables bring their own S3 settings
			if ctx, err = awsconfig.Context(ctx, p); err != nil {
				return ctx, nil, err
			}
		}
	}
	cat, err := cfg.Open(ctx, e.catalogName)
	if err != nil {
		return ctx, nil, fmt.Errorf("open %s: %w", e.where(), err)
	}
	return ctx, cat, nil
}

// redact removes the selected catalog's secrets from s.
func (e *env) redact(s string) string {
	if e.props == nil {
		return s
	}
	return catalogconfig.Redact(e.props, s)
}

func (e *env) ident() (icetable.Identifier, error) {
	if e.tableName == "" {
		return nil, fmt.Errorf("%w: no table: give namespace.name as the first argument or -table", errUsage)
	}
	return parseIdent(e.tableName)
}

// parseIdent parses namespace.name.
func parseIdent(name string) (icetable.Identifier, error) {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if p == "" || len(parts) < 2 {
			return nil, fmt.Errorf("%w: the table must be namespace.name, got %q", errUsage, name)
		}
	}
	return parts, nil
}

// notFound rewords a missing table or namespace: the table as
// namespace.name and the catalog it was looked up in.
func (e *env) notFound(err error) error {
	for _, target := range []error{catalog.ErrNoSuchTable, catalog.ErrNoSuchNamespace} {
		if errors.Is(err, target) {
			return fmt.Errorf("%s in %s: %w", e.tableName, e.where(), target)
		}
	}
	return err
}

// writer opens the table's writer with the shared options, and more,
// and returns the context of the catalog (see catalog).
func (e *env) writer(ctx context.Context, more ...table.Option) (context.Context, *table.Writer, error) {
	ident, err := e.ident()
	if err != nil {
		return ctx, nil, err
	}
	log, err := e.logger()
	if err != nil {
		return ctx, nil, err
	}
	ctx, cat, err := e.catalog(ctx)
	if err != nil {
		return ctx, nil, err
	}
	opts := []table.Option{}
	if e.codeVersion != "" {
		opts = append(opts, table.WithCodeVersion(e.codeVersion))
	}
	if e.runID != "" {
		opts = append(opts, table.WithRunID(e.runID))
	}
	if e.branch != "" {
		opts = append(opts, table.WithBranch(e.branch))
	}
	if log != nil {
		opts = append(opts, table.WithLogger(log))
	}
	if e.commitLock {
		o, err := e.commitLockOption()
		if err != nil {
			return ctx, nil, err
		}
		opts = append(opts, o)
	}
	w, err := table.Open(ctx, cat, ident, append(opts, more...)...)
	return ctx, w, e.notFound(err)
}

// loadTable loads the table without a writer, and returns the context of
// the catalog (see catalog).
func (e *env) loadTable(ctx context.Context) (context.Context, catalog.Catalog, *icetable.Table, error) {
	ident, err := e.ident()
	if err != nil {
		return ctx, nil, nil, err
	}
	ctx, cat, err := e.catalog(ctx)
	if err != nil {
		return ctx, nil, nil, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return ctx, nil, nil, e.notFound(fmt.Errorf("load %s from %s: %w", e.tableName, e.where(), err))
	}
	return ctx, cat, tbl, nil
}

// flagsOnly returns a flag set without the catalog flags, for commands
// that use no catalog.
func (e *env) flagsOnly() *flag.FlagSet {
	fs := flag.NewFlagSet(e.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	e.logFlag(fs)
	return fs
}

// timeText formats a snapshot's timestamp in UTC.
func timeText(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.DateTime) }
