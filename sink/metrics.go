package sink

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// WithMeterProvider sets the OpenTelemetry meter provider of the sink's
// counters. Default: the global provider (otel.GetMeterProvider at Open),
// a no-op unless the program installed one. Each counter is the sum of a
// field of [Stats] over every sink of the process, with the attribute
// icerun.table naming the table (side tables under their own names):
//
//	icerun.sink.rows          Appended     rows committed
//	icerun.sink.redelivered   Redelivered  rows dropped at or below a held position
//	icerun.sink.duplicates    Duplicates   rows dropped in keyed mode
//	icerun.sink.late          Late         late rows
//	icerun.sink.late_dropped  LateDropped  late rows dropped by table.DropLate
//	icerun.sink.late_rejected LateRejected late rows refused by table.RejectLate
//	icerun.sink.dead_letters  DeadLetters  messages sent to the dead-letter table
//	icerun.sink.commits       Commits      snapshots committed
//	icerun.sink.fenced        Fenced       commits refused (ErrFenced, ErrKeyCommitted)
//	icerun.sink.compactions   Compactions  closed partitions compacted
//	icerun.sink.maintenance_failures  MaintenanceFailures  expiries and compactions failed after a commit
//	icerun.sink.skipped       Skipped      messages passed by Sink.Skip
//
// Each is reported from Open on, at 0 until it counts something. They
// are added after every commit attempt, so a scrape between commits
// sees the counts of the last one. The same provider has the sink's
// gauges of pending rows and of the last commit's age, and its commit
// latency histogram (see gauges.go).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		c.meterProvider = mp
		return nil
	}
}

// meters are a sink's counters and the Stats they have been given.
type meters struct {
	counters [12]metric.Int64Counter
	attrs    metric.MeasurementOption
	added    Stats
	table    string
	latency  metric.Float64Histogram // of commits (gauges.go)
	reg      metric.Registration     // of the gauges' callback; nil once stopped
}

// meterNames are the counters' names and descriptions, in the order of
// statsFields.
var meterNames = [12][2]string{
	{"icerun.sink.rows", "rows committed by the sink"},
	{"icerun.sink.redelivered", "rows dropped at or below a position the table holds"},
	{"icerun.sink.duplicates", "rows dropped in keyed mode: key already held"},
	{"icerun.sink.late", "late rows (to the side table or dropped)"},
	{"icerun.sink.late_dropped", "late rows dropped by the drop policy"},
	{"icerun.sink.late_rejected", "late rows refused by the reject policy"},
	{"icerun.sink.dead_letters", "messages sent to the dead-letter table"},
	{"icerun.sink.commits", "snapshots committed by the sink"},
	{"icerun.sink.fenced", "sink commits refused: fenced or key committed by another sink"},
	{"icerun.sink.compactions", "closed partitions compacted"},
	{"icerun.sink.maintenance_failures", "snapshot expiries and compactions that failed after a commit"},
	{"icerun.sink.skipped", "messages passed without a row or a dead letter (Sink.Skip)"},
}

// statsFields lists st's counts in the order of meterNames.
func statsFields(st Stats) [12]int64 {
	return [12]int64{st.Appended, st.Redelivered, st.Duplicates, st.Late, st.LateDropped, st.LateRejected, st.DeadLetters, st.Commits, st.Fenced, st.Compactions, st.MaintenanceFailures, st.Skipped}
}

// newMeters makes the counters, gauges and histogram of s, named table.
func newMeters(mp metric.MeterProvider, table string, s *Sink) (*meters, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter("github.com/icerun/icerun/sink")
	out := &meters{attrs: metric.WithAttributes(attribute.String("icerun.table", table)), table: table}
	for i, n := range meterNames {
		c, err := m.Int64Counter(n[0], metric.WithDescription(n[1]))
		if err != nil {
			return nil, err
		}
		c.Add(context.Background(), 0, out.attrs) // a series from the start, at 0
		out.counters[i] = c
	}
	if err := out.gauges(m, table, s); err != nil {
		return nil, err
	}
	return out, nil
}

// add gives the counters what st counts beyond what they were given.
func (m *meters) add(ctx context.Context, st Stats) {
	if m == nil {
		return
	}
	now, before := statsFields(st), statsFields(m.added)
	for i, c := range m.counters {
		if d := now[i] - before[i]; d > 0 {
			c.Add(ctx, d, m.attrs)
		}
	}
	m.added = st
}
