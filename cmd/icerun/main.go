// Command icerun creates, loads and maintains Iceberg tables through
// icerun's safe partition replacement:
//
//	icerun create   db.t -schema-from day.parquet -partition 'day(event_ts)'
//	icerun replace  db.t -key event_date=2026-07-14 -file day.parquet
//	icerun backfill db.t -dir in/ -from event_date=2025-06-01 -to event_date=2026-07-14 [-workers 4] [-shard i/n | -shards-from-env]
//	icerun plan     db.t -key event_date=2026-07-14 [-file day.parquet]
//	icerun history  db.t event_date=2026-07-14
//	icerun describe db.t
//	icerun expire   db.t -older-than 120h -retain-last 10
//	icerun cleanup  db.t [-min-age 6h | -any-age] [-delete]
//	icerun drop     db.t [-purge]
//	icerun publish  db.t -branch audit [-force]   (replace -branch audit writes to a branch)
//
// The table is the first argument or -table. The catalog is the embedded
// SQLite catalog in ./warehouse (-warehouse, ICERUN_WAREHOUSE) unless
// -catalog NAME (ICERUN_CATALOG) names one of the config file
// (~/.icerun.yaml or $ICERUN_CONFIG) and ICERUN_CATALOG__<NAME>__<KEY>
// variables: see package [github.com/icerun/icerun/catalogconfig]. The
// SQL (SQLite, PostgreSQL), REST and Glue catalogs and the local and S3
// file IO are linked in.
//
// "icerun CMD -h" prints a command's usage and flags and exits 0. Errors
// print one line to stderr and exit 1; bad usage exits 2. Progress of
// long runs goes to stderr: a live line on a terminal, plain lines
// otherwise.
//
// A backfill spread over several workers gives each one its shard:
// -shard i/n (ICERUN_SHARD), or -shards-from-env, which reads the index
// from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) and the count from
// ICERUN_SHARDS. See docs/scale-out.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue"  // type glue
	_ "github.com/apache/iceberg-go/catalog/rest"  // type rest
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// warehouses
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/catalogconfig/awsconfig"
	"github.com/icerun/icerun/table"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a usage error: exit code 2.
var errUsage = errors.New("usage")

// command is one subcommand.
type command struct {
	name    string
	args    string // after the name, for the usage line
	summary string // one line for the command list
	run     func(ctx context.Context, e *env, args []string) error
}

// commands in the order of the top-level help.
var commands = []command{
	{"create", "TABLE (-schema-from FILE.parquet | -schema JSON) [-partition SPEC] [flags]", "create a table (namespace too) from a Parquet file's schema or an Iceberg schema", createCmd},
	{"replace", "TABLE -key KEY -file PATH [flags]", "make one partition hold exactly the rows of Parquet files", replaceCmd},
	{"backfill", "TABLE -dir DIR -from KEY -to KEY [flags]", "replace a range of partitions from DIR/KEY/ folders, resumably", backfillCmd},
	{"plan", "TABLE -key KEY [-file PATH] [flags]", "dry run of replace: the files it deletes and what it would reject", planCmd},
	{"history", "TABLE KEY [flags]", "the icerun writes of one partition", historyCmd},
	{"describe", "TABLE [flags]", "schema with field ids, partition spec, properties, snapshots, sizes", describeCmd},
	{"expire", "TABLE [-older-than D] [-retain-last N] [flags]", "expire old snapshots and their files, keeping icerun's lineage", expireCmd},
	{"cleanup", "TABLE [-min-age D | -any-age] [-delete] [flags]", "list (or delete) files no snapshot references", cleanupCmd},
	{"drop", "TABLE [-purge] [flags]", "drop a table from the catalog (and delete its files with -purge)", dropCmd},
	{"publish", "TABLE -branch NAME [-force] [flags]", "publish a write-audit-publish branch (replace -branch NAME) onto main", publishCmd},
	{"sink", "TABLE -brokers HOSTS -topic T -group G [flags]", "stream a Kafka topic of JSON messages into the table, each message exactly once", sinkCmd},
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: icerun COMMAND [TABLE] [flags]   (icerun COMMAND -h for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, `
The catalog is the embedded SQLite catalog in ./warehouse (-warehouse) unless
-catalog NAME names one of ~/.icerun.yaml ($ICERUN_CONFIG) or the
ICERUN_CATALOG__<NAME>__<KEY> variables (PyIceberg's format).`)
}

// run runs one command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && lookup(args[1]) != nil {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "icerun: unknown command %q (icerun -h lists the commands)\n", args[0])
		return 2
	}
	e := &env{cmd: c, out: stdout, err: stderr}
	err := c.run(ctx, e, args[1:])
	e.close()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, oneLine("icerun "+c.name+": "+err.Error()+" (icerun "+c.name+" -h for usage)"))
		return 2
	}
	fmt.Fprintln(stderr, oneLine("icerun "+c.name+": "+e.redact(err.Error())))
	return 1
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// env is what every command shares: output and the catalog flags.
type env struct {
	cmd      *command
	out, err io.Writer

	warehouse, catalogName        string
	tableName, runID, codeVersion string
	props                         map[string]string // of the named catalog, for redaction
	tableArg                      bool              // the table was given as an argument
	branch                        string            // -branch of a writing command; "" is main
	commitLock                    bool              // -commit-lock
	closers                       []func() error    // run when the command returns
}

// flags returns the command's flag set with the shared flags.
func (e *env) flags() *flag.FlagSet {
	fs := flag.NewFlagSet(e.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.warehouse, "warehouse", envOr("ICERUN_WAREHOUSE", catalogconfig.DefaultWarehouse), "folder of the embedded catalog (ICERUN_WAREHOUSE)")
	fs.StringVar(&e.catalogName, "catalog", os.Getenv("ICERUN_CATALOG"), "named catalog of ~/.icerun.yaml ($ICERUN_CONFIG) and ICERUN_CATALOG__<NAME>__<KEY> (ICERUN_CATALOG; default: the embedded one)")
	fs.StringVar(&e.tableName, "table", os.Getenv("ICERUN_TABLE"), "table, namespace.name, instead of the first argument (ICERUN_TABLE)")
	return fs
}

// writeFlags adds the flags of the commands that write rows.
func (e *env) writeFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.runID, "run-id", os.Getenv("ICERUN_RUN_ID"), "run id recorded in the snapshots (ICERUN_RUN_ID; default: random)")
	fs.StringVar(&e.codeVersion, "code-version", envOr("ICERUN_CODE_VERSION", table.DefaultCodeVersion), "code version recorded in the snapshots, e.g. a git commit (ICERUN_CODE_VERSION)")
}

// parse parses args: an optional TABLE first, then flags. -h prints the
// usage to stdout; a bad flag is a usage error.
func (e *env) parse(fs *flag.FlagSet, args []string) error {
	if !e.tableArg && len(args) > 0 && !strings.HasPrefix(args[0], "-") && !strings.Contains(args[0], "=") {
		e.tableArg = true
		args = append([]string{"-table", args[0]}, args[1:]...)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(e.out, "usage: icerun %s %s\n\n%s.\n\nflags:\n", e.cmd.name, e.cmd.args, e.cmd.summary)
			fs.SetOutput(e.out)
			fs.PrintDefaults()
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	// The table after the flags: take it, and parse the flags after it.
	if !e.tableArg && fs.NArg() > 0 && !strings.Contains(fs.Arg(0), "=") {
		e.tableArg = true
		e.tableName = fs.Arg(0)
		return e.parse(fs, fs.Args()[1:])
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// catalog opens the selected catalog. The context it returns carries the
// catalog's AWS configuration, parsed once (see awsconfig); the command
// uses it from then on.
func (e *env) catalog(ctx context.Context) (context.Context, catalog.Catalog, error) {
	if e.catalogName == "" {
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
	return ctx, cat, err
}

// redact removes the selected catalog's secrets from s.
func (e *env) redact(s string) string {
	if e.props == nil {
		return s
	}
	return catalogconfig.Redact(e.props, s)
}

func (e *env) ident() (icetable.Identifier, error) {
	parts := strings.Split(e.tableName, ".")
	for _, p := range parts {
		if p == "" || len(parts) < 2 {
			return nil, fmt.Errorf("%w: the table must be namespace.name, got %q", errUsage, e.tableName)
		}
	}
	return parts, nil
}

// writer opens the table's writer with the shared options, and more,
// and returns the context of the catalog (see catalog).
func (e *env) writer(ctx context.Context, more ...table.Option) (context.Context, *table.Writer, error) {
	ident, err := e.ident()
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
	if e.commitLock {
		o, err := e.commitLockOption()
		if err != nil {
			return ctx, nil, err
		}
		opts = append(opts, o)
	}
	w, err := table.Open(ctx, cat, ident, append(opts, more...)...)
	return ctx, w, err
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
		return ctx, nil, nil, fmt.Errorf("load %s: %w", e.tableName, err)
	}
	return ctx, cat, tbl, nil
}
