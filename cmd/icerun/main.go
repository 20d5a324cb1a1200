// Command icerun drives icerun's partition replacement for operators:
//
//	icerun replace  -table db.t -key event_date=2026-07-14 -file day.parquet [-branch audit]
//	icerun backfill -table db.t -dir in/ -from event_date=2025-06-01 -to event_date=2026-07-14 [-workers 4] [-shard i/n | -shards-from-env]
//	icerun history  -table db.t event_date=2026-07-14
//	icerun plan     -table db.t -key event_date=2026-07-14
//	icerun cleanup  -table db.t [-min-age 6h | -any-age] [-delete]
//	icerun publish  db.t -branch audit [-force]
//
// The catalog is the embedded SQLite catalog in ./warehouse (-warehouse,
// ICERUN_WAREHOUSE), or any iceberg-go catalog given by -catalog-uri
// (ICERUN_CATALOG_URI) and -catalog-type (ICERUN_CATALOG_TYPE, default
// rest). Errors print one line and exit 1; bad usage exits 2.
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

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal"
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

var commands = map[string]func(ctx context.Context, e *env, args []string) error{
	"replace":  replaceCmd,
	"backfill": backfillCmd,
	"history":  historyCmd,
	"plan":     planCmd,
	"cleanup":  cleanupCmd,
	"publish":  publishCmd,
}

// run runs one command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || commands[args[0]] == nil {
		fmt.Fprintln(stderr, "icerun: usage: icerun replace|backfill|history|plan|cleanup|publish [flags] (icerun CMD -h for flags)")
		return 2
	}
	e := &env{out: stdout, err: stderr}
	err := commands[args[0]](ctx, e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, oneLine("icerun "+args[0]+": "+err.Error()))
		return 2
	}
	fmt.Fprintln(stderr, oneLine("icerun "+args[0]+": "+err.Error()))
	return 1
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// env is what every command shares: output and the catalog flags.
type env struct {
	out, err io.Writer

	warehouse, catalogURI, catalogType string
	tableName, runID, codeVersion      string
	branch                             string // -branch of a writing command; "" is main
}

// flags returns a flag set with the shared flags.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.warehouse, "warehouse", envOr("ICERUN_WAREHOUSE", "./warehouse"), "embedded catalog folder (ICERUN_WAREHOUSE)")
	fs.StringVar(&e.catalogURI, "catalog-uri", os.Getenv("ICERUN_CATALOG_URI"), "URI of another iceberg-go catalog (ICERUN_CATALOG_URI)")
	fs.StringVar(&e.catalogType, "catalog-type", envOr("ICERUN_CATALOG_TYPE", "rest"), "type of that catalog (ICERUN_CATALOG_TYPE)")
	fs.StringVar(&e.tableName, "table", os.Getenv("ICERUN_TABLE"), "table, namespace.name (ICERUN_TABLE)")
	fs.StringVar(&e.runID, "run-id", os.Getenv("ICERUN_RUN_ID"), "run id recorded in the snapshots (default: random)")
	fs.StringVar(&e.codeVersion, "code-version", envOr("ICERUN_CODE_VERSION", table.DefaultCodeVersion), "code version recorded in the snapshots (ICERUN_CODE_VERSION)")
	return fs
}

// parse parses args; the error of a bad flag is a usage error.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func (e *env) catalog(ctx context.Context) (catalog.Catalog, error) {
	if e.catalogURI == "" {
		return internal.OpenSQLite(ctx, e.warehouse)
	}
	return catalog.Load(ctx, "icerun", iceberg.Properties{"type": e.catalogType, "uri": e.catalogURI})
}

func (e *env) ident() (icetable.Identifier, error) {
	parts := strings.Split(e.tableName, ".")
	if e.tableName == "" || len(parts) < 2 || slicesContainsEmpty(parts) {
		return nil, fmt.Errorf("%w: -table must be namespace.name, got %q", errUsage, e.tableName)
	}
	return parts, nil
}

func slicesContainsEmpty(s []string) bool {
	for _, p := range s {
		if p == "" {
			return true
		}
	}
	return false
}

// writer opens the table's writer with the shared options, and more.
func (e *env) writer(ctx context.Context, more ...table.Option) (*table.Writer, error) {
	ident, err := e.ident()
	if err != nil {
		return nil, err
	}
	cat, err := e.catalog(ctx)
	if err != nil {
		return nil, err
	}
	opts := []table.Option{table.WithCodeVersion(e.codeVersion)}
	if e.runID != "" {
		opts = append(opts, table.WithRunID(e.runID))
	}
	if e.branch != "" {
		opts = append(opts, table.WithBranch(e.branch))
	}
	return table.Open(ctx, cat, ident, append(opts, more...)...)
}
