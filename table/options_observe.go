package table

import (
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// WithLogger logs one structured record per commit attempt (level Debug,
// Warn for a conflict) and one per outcome (Info; Error on failure), with
// the table, partitions, snapshot, attempts, rows, bytes and durations.
// Default: no logging.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrBadOption)
		}
		c.logger = l
		return nil
	}
}

// WithTracerProvider sets the OpenTelemetry tracer provider of the spans
// around every call (icerun.replace, icerun.upsert, icerun.delete,
// icerun.compact, icerun.replace_window, icerun.publish,
// icerun.rewrite_manifests; attribute icerun.operation) and its commit loop
// (icerun.commit, one event per attempt). Default: the global provider
// (otel.GetTracerProvider at Open), a no-op unless the program installed
// one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: nil tracer provider", ErrBadOption)
		}
		c.tracerProvider = tp
		return nil
	}
}

// WithMeterProvider sets the OpenTelemetry meter provider of the metrics:
// counters icerun.rows, icerun.bytes (of new data files), icerun.commits
// (attribute outcome: committed, unchanged or failed), icerun.conflicts
// and icerun.retries, and the histogram icerun.operation.duration
// (seconds), each with the attributes icerun.table and icerun.operation.
// Default: the global provider (otel.GetMeterProvider at Open), a no-op
// unless the program installed one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: nil meter provider", ErrBadOption)
		}
		c.meterProvider = mp
		return nil
	}
}
