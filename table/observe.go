package table

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apache/iceberg-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/snapshotcommit"
)

// Instrumentation scope of icerun's spans and metrics.
const instrumentation = "github.com/icerun/icerun/table"

// observer holds a writer's logger, tracer and instruments.
type observer struct {
	log                                      *slog.Logger
	tracer                                   trace.Tracer
	rows, bytes, commits, conflicts, retries metric.Int64Counter
	duration                                 metric.Float64Histogram
}

// newObserver builds the observer of cfg.
func newObserver(cfg *config) (*observer, error) {
	tp, mp := cfg.tracerProvider, cfg.meterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	o := &observer{log: cfg.logger, tracer: tp.Tracer(instrumentation)}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	m := mp.Meter(instrumentation)
	var err error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, cerr := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if cerr != nil && err == nil {
			err = cerr
		}
		return c
	}
	o.rows = counter("icerun.rows", "{row}", "input rows committed by replacements")
	o.bytes = counter("icerun.bytes", "By", "bytes of the data files replacements committed")
	o.commits = counter("icerun.commits", "{commit}", "replacement outcomes")
	o.conflicts = counter("icerun.conflicts", "{conflict}", "commit attempts that lost a race")
	o.retries = counter("icerun.retries", "{attempt}", "commit attempts after the first")
	o.duration, err = m.Float64Histogram("icerun.operation.duration", metric.WithUnit("s"), metric.WithDescription("duration of a writer's calls, by icerun.operation"))
	if err != nil {
		return nil, fmt.Errorf("%w: metrics: %w", ErrBadOption, err)
	}
	return o, nil
}

// Operations, as the spans, log records and metric attributes of a
// writer's calls name them (the span icerun.<operation>, the log message
// "icerun <operation>", the attribute icerun.operation).
const (
	opReplace          = "replace"
	opReplaceWindow    = "replace_window"
	opUpsert           = "upsert"
	opApplyChanges     = "apply_changes"
	opDelete           = "delete"
	opCompact          = "compact"
	opPublish          = "publish"
	opRewriteManifests = "rewrite_manifests"
)

// observe starts the span of one call of operation (one of the op
// constants; desc is the call's description, with the table and keys);
// done ends it, logs the outcome and records the metrics.
func (w *Writer) observe(ctx context.Context, operation, desc string) (context.Context, func(commit.Result, error)) {
	o := w.obs
	start := time.Now()
	opAttr := attribute.String("icerun.operation", operation)
	ctx, span := o.tracer.Start(ctx, "icerun."+operation, trace.WithAttributes(attribute.String("icerun.table", w.name), opAttr))
	return ctx, func(res commit.Result, err error) {
		d := time.Since(start)
		outcome := "committed"
		switch {
		case err != nil:
			outcome = "failed"
		case res.Unchanged:
			outcome = "unchanged"
		}
		attrs := []attribute.KeyValue{attribute.String("icerun.table", w.name), opAttr, attribute.String("outcome", outcome)}
		span.SetAttributes(attribute.StringSlice("icerun.partitions", res.Partitions), attribute.Int64("icerun.snapshot", res.SnapshotID),
			attribute.Int("icerun.attempts", res.Attempts), attribute.Int64("icerun.rows", res.AddedRows), attribute.String("outcome", outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
		o.commits.Add(ctx, 1, metric.WithAttributes(attrs...))
		o.duration.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
		if outcome == "committed" {
			o.rows.Add(ctx, res.AddedRows, metric.WithAttributes(attrs[:2]...))
		}
		if res.Attempts > 1 {
			o.retries.Add(ctx, int64(res.Attempts-1), metric.WithAttributes(attrs[:2]...))
		}
		level := slog.LevelInfo
		if err != nil {
			level = slog.LevelError
		}
		o.log.LogAttrs(ctx, level, "icerun "+operation, slog.String("table", w.name), slog.String("op", desc), slog.String("outcome", outcome),
			slog.Any("partitions", res.Partitions), slog.Int64("snapshot", res.SnapshotID), slog.Int("attempts", res.Attempts),
			slog.Int64("added_rows", res.AddedRows), slog.Int64("deleted_rows", res.DeletedRows), slog.Int("added_files", res.AddedFiles),
			slog.Int("deleted_files", res.DeletedFiles), slog.Duration("duration", d), errAttr(err))
	}
}

// observeCommit starts the span of a commit loop and sets req's attempt
// hook; done ends the span.
func (w *Writer) observeCommit(ctx context.Context, req *snapshotcommit.Request, files []iceberg.DataFile) (context.Context, func(commit.Result, error)) {
	o := w.obs
	var size int64
	for _, f := range files {
		size += f.FileSizeBytes()
	}
	keys := make([]string, len(req.Parts))
	for i, p := range req.Parts {
		keys[i] = p.Key.String()
	}
	ctx, span := o.tracer.Start(ctx, "icerun.commit", trace.WithAttributes(attribute.StringSlice("icerun.partitions", keys), attribute.Int64("icerun.bytes", size)))
	last := time.Now()
	req.Attempted = func(n int, err error) {
		d := time.Since(last) // this attempt, and the backoff before it
		last = time.Now()
		level, result := slog.LevelDebug, "committed"
		if err != nil {
			result = "failed"
			if snapshotcommit.IsConflict(err) {
				level, result = slog.LevelWarn, "conflict"
				o.conflicts.Add(ctx, 1, metric.WithAttributes(attribute.String("icerun.table", w.name)))
			}
		}
		span.AddEvent("attempt", trace.WithAttributes(attribute.Int("n", n), attribute.String("result", result)))
		o.log.LogAttrs(ctx, level, "icerun commit attempt", slog.String("table", w.name), slog.Any("partitions", keys),
			slog.Int("attempt", n), slog.String("result", result), slog.Int64("bytes", size), slog.Duration("duration", d), errAttr(err))
	}
	return ctx, func(res commit.Result, err error) {
		if err == nil && !res.Unchanged {
			o.bytes.Add(ctx, size, metric.WithAttributes(attribute.String("icerun.table", w.name)))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// Logger is the writer's logger ([WithLogger]; one that discards without
// it), for the maintenance its callers run on the writer's table (snapshot
// expiry in package backfill) to log beside the writer's own calls.
func (w *Writer) Logger() *slog.Logger { return w.obs.log }

func errAttr(err error) slog.Attr {
	if err == nil {
		return slog.Attr{}
	}
	return slog.String("error", err.Error())
}
