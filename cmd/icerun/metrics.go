package main

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// exportMetrics installs, when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, a global OpenTelemetry
// meter provider that exports the command's metrics (the table writers'
// icerun.rows, icerun.commits, ...; the sink's icerun.sink.rows, ...) by
// OTLP over HTTP, every OTEL_METRIC_EXPORT_INTERVAL (default 60 s) and
// once more at the end. The exporter reads the other standard OTEL_*
// variables (headers, timeout, TLS). flush exports what is left and stops
// it; with neither variable set, nothing is installed and flush does
// nothing.
func exportMetrics(ctx context.Context) (flush func(context.Context) error, err error) {
	if !otlpConfigured() {
		return func(context.Context) error { return nil }, nil
	}
	mp, err := newMeterProvider(ctx)
	if err != nil {
		return nil, err
	}
	otel.SetMeterProvider(mp)
	return mp.Shutdown, nil
}

// otlpConfigured reports whether the environment names an OTLP endpoint.
func otlpConfigured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// newMeterProvider is a meter provider with readers, and the OTLP
// exporter's periodic reader when the environment names an endpoint.
func newMeterProvider(ctx context.Context, readers ...sdkmetric.Reader) (*sdkmetric.MeterProvider, error) {
	var opts []sdkmetric.Option
	for _, r := range readers {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	if otlpConfigured() {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: OpenTelemetry metrics exporter: %w", errUsage, err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	return sdkmetric.NewMeterProvider(opts...), nil
}
