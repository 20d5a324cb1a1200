package sink

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The sink's gauges and histogram, beside its counters (see
// [WithMeterProvider]), with the attribute icerun.table:
//
//	icerun.sink.pending_rows      rows waiting for the next commit
//	icerun.sink.pending_bytes     their bytes in memory
//	icerun.sink.last_commit_age   seconds since the last commit landed (since Open before the first)
//	icerun.sink.commit.duration   seconds a commit took, landed or not (attribute icerun.outcome: ok or error)
//
// The gauges are read from [Sink.Health] when the meter provider collects;
// a closed sink stops reporting them.
const (
	gaugePendingRows   = "icerun.sink.pending_rows"
	gaugePendingBytes  = "icerun.sink.pending_bytes"
	gaugeLastCommitAge = "icerun.sink.last_commit_age"
	histCommitDuration = "icerun.sink.commit.duration"
)

// commitBuckets are the bounds, in seconds, of the commit latency
// histogram: from a local catalog's tens of milliseconds to a minute of
// retries.
var commitBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// gauges registers the sink's gauges and commit histogram on m.
func (mt *meters) gauges(m metric.Meter, table string, s *Sink) error {
	var err error
	mt.latency, err = m.Float64Histogram(histCommitDuration, metric.WithUnit("s"),
		metric.WithDescription("time a sink commit took, landed or not"), metric.WithExplicitBucketBoundaries(commitBuckets...))
	if err != nil {
		return err
	}
	rows, err := m.Int64ObservableGauge(gaugePendingRows, metric.WithDescription("rows waiting for the sink's next commit"))
	if err != nil {
		return err
	}
	bytes, err := m.Int64ObservableGauge(gaugePendingBytes, metric.WithUnit("By"), metric.WithDescription("bytes of the rows waiting for the sink's next commit"))
	if err != nil {
		return err
	}
	age, err := m.Float64ObservableGauge(gaugeLastCommitAge, metric.WithUnit("s"),
		metric.WithDescription("seconds since the sink's last commit landed (since the sink opened before the first)"))
	if err != nil {
		return err
	}
	attrs := metric.WithAttributes(attribute.String("icerun.table", table))
	mt.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		h := s.Health()
		o.ObserveInt64(rows, h.PendingRows, attrs)
		o.ObserveInt64(bytes, h.PendingBytes, attrs)
		last := h.LastCommit
		if last.IsZero() {
			last = h.Opened
		}
		o.ObserveFloat64(age, time.Since(last).Seconds(), attrs)
		return nil
	}, rows, bytes, age)
	return err
}

// commitLatency records a commit's duration d in the histogram.
func (mt *meters) commitLatency(ctx context.Context, d time.Duration, err error) {
	if mt == nil || mt.latency == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	mt.latency.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("icerun.table", mt.table), attribute.String("icerun.outcome", outcome)))
}

// stop unregisters the gauges: a closed sink reports nothing.
func (mt *meters) stop() error {
	if mt == nil || mt.reg == nil {
		return nil
	}
	reg := mt.reg
	mt.reg = nil
	return reg.Unregister()
}
