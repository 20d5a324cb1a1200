package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/kafka"
)

// opsServer is the sink's HTTP listener (-http ADDR): /healthz, /readyz
// and /metrics. Without an address it serves nothing and its methods
// change nothing. Its handlers are safe for concurrent use.
type opsServer struct {
	status *kafka.Status               // given to kafka.Run
	mp     *sdkmetric.MeterProvider    // with the Prometheus reader; nil without -http
	ready  func(context.Context) error // readiness beyond the status; nil: none
	srv    *http.Server
	done   sync.WaitGroup
}

// catalogProbeWait bounds the catalog request of one /readyz.
const catalogProbeWait = 2 * time.Second

// errCatalogUnreachable is the error of /readyz when the catalog does not
// load the table.
var errCatalogUnreachable = errors.New("catalog unreachable")

// startOps listens on addr (none when ""): a meter provider whose
// metrics /metrics serves in the Prometheus text format (with the OTLP
// exporter too when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set), installed as the global
// one so that the table writers' metrics are there too. The listener is
// bound before startOps returns: an address in use, or one that is not
// an address, fails here (a usage error: exit 2). Call close
// when the sink has stopped.
func startOps(ctx context.Context, addr string, log *slog.Logger) (*opsServer, error) {
	o := &opsServer{status: &kafka.Status{}}
	if addr == "" {
		return o, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("-http: Prometheus exporter: %w", err)
	}
	mp, err := newMeterProvider(ctx, exp)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%w: -http %s: %w", errUsage, addr, err), mp.Shutdown(ctx))
	}
	otel.SetMeterProvider(mp)
	o.mp = mp
	o.srv = &http.Server{Handler: o.handler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{})), ReadHeaderTimeout: 5 * time.Second}
	o.done.Go(func() {
		if err := o.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("icerun sink: -http listener stopped", slog.String("address", addr), slog.Any("error", err))
		}
	})
	log.Info("icerun sink: serving /healthz, /readyz and /metrics", slog.String("address", ln.Addr().String()))
	return o, nil
}

// handler serves /healthz (200 while the process serves), /readyz (200
// when [opsServer.readiness] is nil, else 503 with its text) and
// /metrics.
func (o *opsServer) handler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := o.readiness(r.Context()); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", metrics)
	return mux
}

// readiness is nil when the sink is ready: partitions assigned, commits
// landing ([kafka.Status.Ready]) and the catalog answering.
func (o *opsServer) readiness(ctx context.Context) error {
	if err := o.status.Ready(time.Now()); err != nil {
		return err
	}
	if o.ready != nil {
		return o.ready(ctx)
	}
	return nil
}

// probeCatalog makes readiness also require that cat loads ident within
// catalogProbeWait.
func (o *opsServer) probeCatalog(cat catalog.Catalog, ident icetable.Identifier) {
	o.ready = func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, catalogProbeWait)
		defer cancel()
		if _, err := cat.LoadTable(ctx, ident); err != nil {
			return fmt.Errorf("%w: load %s: %w", errCatalogUnreachable, strings.Join(ident, "."), err)
		}
		return nil
	}
}

// sinkOptions are the sink's options for the listener's meter provider.
func (o *opsServer) sinkOptions() []sink.Option {
	if o.mp == nil {
		return nil
	}
	return []sink.Option{sink.WithMeterProvider(o.mp)}
}

// meterProvider is the provider of the consumer's gauges; nil (the
// global one) without -http.
func (o *opsServer) meterProvider() metric.MeterProvider {
	if o.mp == nil {
		return nil
	}
	return o.mp
}

// close stops the listener, then exports what is left by OTLP and stops
// the meter provider.
func (o *opsServer) close(ctx context.Context) error {
	if o.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := o.srv.Shutdown(ctx)
	o.done.Wait()
	return errors.Join(err, o.mp.Shutdown(ctx))
}
