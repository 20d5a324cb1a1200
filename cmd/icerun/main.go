// Command icerun creates, loads and maintains Iceberg tables through
// icerun's safe partition replacement. "icerun -h" lists the commands and
// "icerun CMD -h" prints a command's flags; docs/cli.md holds all of them,
// generated from this help.
//
// The table is the first argument or -table. The catalog is the embedded
// SQLite catalog in ./warehouse (-warehouse, ICERUN_WAREHOUSE) unless
// -catalog NAME (ICERUN_CATALOG) names one of the config file
// (~/.icerun.yaml or $ICERUN_CONFIG) and ICERUN_CATALOG__<NAME>__<KEY>
// variables: see package [github.com/icerun/icerun/catalogconfig].
//
// Nothing on the command line is ignored: an argument a command does not
// use is a usage error (exit 2). Exit codes are documented in exitcode.go
// and docs/cli.md; SIGINT and SIGTERM stop a run cleanly (what was staged
// is removed, the summary printed) with exit 130 and 143, and the sink
// after committing what is pending, with exit 0.
package main

//go:generate go test -run TestCLIReference -update .

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

func main() {
	ctx, stop := notifySignals(context.Background(), stopping(os.Args[1:]), signalLogger(os.Args[1:]))
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a usage error: exit code 2.
var errUsage = errors.New("usage")

// command is one subcommand. Adding one is adding an entry to commands.
type command struct {
	name    string
	args    string // after the name, for the usage line
	summary string // one line for the command list
	run     func(ctx context.Context, e *env, args []string) error
}

// commands in the order of the top-level help.
var commands = []command{
	{"create", "TABLE (-schema-from PATH | -schema JSON) [-partition SPEC] [flags]", "create a table (namespace too) from a Parquet file's or Hive folder's schema, or an Iceberg schema", createCmd},
	{"replace", "TABLE [-key KEY] (-file PATH | PATH...) [flags]", "make one partition (-key) or the partitions of the rows hold exactly the rows of Parquet files", replaceCmd},
	{"upsert", "TABLE -on COLUMN[,COLUMN] (-file PATH | PATH...) [flags]", "insert the input's rows, replacing the table's rows of the same key", upsertCmd},
	{"window", "TABLE -last N [-end KEY] (-file PATH | PATH...) [flags]", "make the last N partitions (a lookback window) hold exactly the input's rows", windowCmd},
	{"backfill", "TABLE -dir DIR -from KEY -to KEY [flags]", "replace a range of partitions from DIR/KEY/ folders, resumably", backfillCmd},
	{"plan", "TABLE -key KEY [-file PATH | PATH...] [flags]", "dry run of replace: the files it deletes and what it would reject", planCmd},
	{"history", "TABLE KEY [flags]", "the icerun writes of one partition", historyCmd},
	{"describe", "TABLE [flags]", "schema with field ids, partition spec, properties, snapshots, sizes", describeCmd},
	{"list", "[NAMESPACE] [flags]", "the namespaces of the catalog, or the tables of a namespace", listCmd},
	{"branches", "TABLE [flags]", "the branches and tags of a table", branchesCmd},
	{"publish", "TABLE -branch NAME [-force] [flags]", "publish a write-audit-publish branch (replace -branch NAME) onto main", publishCmd},
	{"drop-branch", "TABLE -branch NAME [flags]", "remove a branch (its snapshots stay until expired)", dropBranchCmd},
	{"expire", "TABLE [-older-than D] [-retain-last N] [flags]", "expire old snapshots and their files, keeping icerun's lineage", expireCmd},
	{"compact", "TABLE (-key K | -all) [-min-delete-ratio R] [-min-small-files N] [flags]", "fold a partition's delete files and small files into target-size files", compactCmd},
	{"cleanup", "TABLE [-min-age D | -any-age] [-delete] [flags]", "list (or delete) files no snapshot references", cleanupCmd},
	{"drop", "TABLE [-purge] [flags]", "drop a table from the catalog (and delete its files with -purge)", dropCmd},
	{"sink", "TABLE -brokers HOSTS -topic T[,T...] | -topic-regex RE -group G [flags]", "stream Kafka topics of JSON or Avro messages into the table, each message exactly once", sinkCmd},
	{"version", "", "the version of icerun and of the libraries it is built with", versionCmd},
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
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
The catalog is the embedded SQLite catalog in ./warehouse (-warehouse) unless
-catalog NAME names one of ~/.icerun.yaml ($ICERUN_CONFIG) or the
ICERUN_CATALOG__<NAME>__<KEY> variables (PyIceberg's format).
`)
	fmt.Fprint(w, exitCodesHelp)
}

// run runs one command and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && lookup(args[1]) != nil {
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		args = []string{"version"}
	}
	c := lookup(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "icerun: unknown command %q (icerun -h lists the commands)\n", args[0])
		return exitUsage
	}
	e := &env{cmd: c, out: stdout, err: stderr, logFormat: envOr("ICERUN_LOG_FORMAT", defaultLogFormat(c.name))}
	flush, err := exportMetrics(ctx)
	if err == nil {
		err = c.run(ctx, e, args[1:])
		if ferr := flush(context.WithoutCancel(ctx)); ferr != nil {
			e.logFormat = logFormatArg(args[1:], e.logFormat)
			if log, _ := e.logger(); log != nil {
				log.Warn("icerun "+c.name+": exporting metrics", slog.String("command", c.name), slog.String("error", oneLine(ferr.Error())))
			} else {
				fmt.Fprintln(stderr, oneLine("icerun "+c.name+": exporting metrics: "+ferr.Error()))
			}
		}
	}
	e.close()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		e.failure(args[1:], "icerun "+c.name+": "+err.Error()+" (icerun "+c.name+" -h for usage)", exitUsage, err)
		return exitUsage
	}
	err = explain(err)
	code := exitCode(ctx, err)
	e.failure(args[1:], "icerun "+c.name+": "+e.redact(err.Error())+exitHint(code), code, err)
	return code
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
