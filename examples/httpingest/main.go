// Command httpingest is an HTTP service that appends the events its
// clients POST to an Iceberg table exactly once, and answers 200 only
// after the commit that holds them: an acknowledged event is in the
// table, and an event whose answer was lost, or that failed, may be sent
// again (a retry never makes a second row).
//
// Events have no position a restarted service could resume from, so
// their dedupe is keyed: each event's id is derived from its own fields
// (package recordid: the client's name and its sequence number, under a
// namespace of this service), and a [sink.Ingester] in keyed mode on
// that id takes the events of every request handler and group-commits
// them on the commit interval.
//
//	go run ./examples/httpingest [-warehouse ./warehouse] [-addr 127.0.0.1:8080] [-commit-interval 200ms]
//	curl -d '[{"client":"c1","seq":1,"payload":"hello"}]' http://127.0.0.1:8080/events
//
// It uses icerun's public packages only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// Table is the table the service appends to.
var Table = icetable.Identifier{"ingest", "events"}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "httpingest:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then flushes: the events of the
// requests in flight are committed and answered before it returns.
func run(ctx context.Context, args []string, out io.Writer) error {
	fl := flag.NewFlagSet("httpingest", flag.ContinueOnError)
	warehouse := fl.String("warehouse", "./warehouse", "folder of the embedded catalog and table data")
	addr := fl.String("addr", "127.0.0.1:8080", "address to listen on")
	interval := fl.Duration("commit-interval", 200*time.Millisecond, "the longest an event waits for its commit")
	replica := fl.Int("replica", 0, "this replica's number: each replica writing the table takes its own")
	if err := fl.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	cat, err := catalogconfig.OpenLocal(ctx, *warehouse)
	if err != nil {
		return err
	}
	if err := createTable(ctx, cat); err != nil {
		return err
	}
	from := sink.SourcePartition{Source: "http:events", Partition: int32(*replica)}
	in, err := sink.OpenIngester(ctx, cat, Table, from,
		sink.WithKey("event_id"), sink.WithCommitInterval(*interval),
		sink.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return errors.Join(err, in.Close(context.WithoutCancel(ctx)))
	}
	srv := &http.Server{Handler: newHandler(in), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "httpingest: listening on %s\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	select {
	case err = <-served:
	case <-ctx.Done():
		// Shutdown waits for the handlers, which wait for their commit.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		<-served
	}
	if cerr := in.Close(context.WithoutCancel(ctx)); err == nil || errors.Is(err, http.ErrServerClosed) {
		err = cerr
	}
	return err
}

// createTable creates Table when it is missing: event_id (the key), the
// client, its sequence number and the payload, unpartitioned.
func createTable(ctx context.Context, cat catalog.Catalog) error {
	if _, err := cat.LoadTable(ctx, Table); err == nil {
		return nil
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return err
	}
	if err := cat.CreateNamespace(ctx, Table[:1], nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return err
	}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "event_id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "client", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 4, Name: "payload", Type: iceberg.PrimitiveTypes.String},
	)
	_, err := cat.CreateTable(ctx, Table, sch)
	return err
}
