package sink_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// The sink's OpenTelemetry counters equal its Stats after every commit,
// with the table as attribute; beside them, the gauges of pending rows and
// bytes and of the last commit's age, and the commit latency histogram
// (one point per commit, by outcome).
func TestMeters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	reader := sdkmetric.NewManualReader()
	s := mustOpen(t, cat, ident, sink.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	mustWrite(t, s, sp0, 0, 10)
	mustCommit(t, s)
	mustWrite(t, s, sp0, 5, 15) // 5..9 redelivered
	mustCommit(t, s)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	var gauges []string
	var commitsTimed uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				gauges = append(gauges, m.Name)
				if len(d.DataPoints) != 1 || d.DataPoints[0].Value != 0 {
					t.Errorf("%s = %+v, want one point at 0 (nothing pending)", m.Name, d.DataPoints)
				}
				continue
			case metricdata.Gauge[float64]:
				gauges = append(gauges, m.Name)
				if len(d.DataPoints) != 1 || d.DataPoints[0].Value < 0 || d.DataPoints[0].Value > 60 {
					t.Errorf("%s = %+v, want one point of seconds since the last commit", m.Name, d.DataPoints)
				}
				continue
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					if v, _ := dp.Attributes.Value(attribute.Key("icerun.outcome")); v.AsString() == "ok" {
						commitsTimed += dp.Count
					}
				}
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok {
				t.Fatalf("%s: %T, want a sum", m.Name, m.Data)
			}
			for _, dp := range sum.DataPoints {
				if v, _ := dp.Attributes.Value(attribute.Key("icerun.table")); v.AsString() != "db.events" {
					t.Errorf("%s: icerun.table = %q", m.Name, v.AsString())
				}
				got[m.Name] += dp.Value
			}
		}
	}
	st := s.Stats()
	for name, want := range map[string]int64{"icerun.sink.rows": st.Appended, "icerun.sink.redelivered": st.Redelivered, "icerun.sink.commits": st.Commits} {
		if got[name] != want {
			t.Errorf("%s = %d, want %d (Stats %+v)", name, got[name], want, st)
		}
	}
	slices.Sort(gauges)
	if want := []string{"icerun.sink.last_commit_age", "icerun.sink.pending_bytes", "icerun.sink.pending_rows"}; !slices.Equal(gauges, want) {
		t.Errorf("gauges = %v, want %v", gauges, want)
	}
	if commitsTimed != 2 {
		t.Errorf("icerun.sink.commit.duration holds %d commits, want 2", commitsTimed)
	}
	if got["icerun.sink.rows"] != 15 || got["icerun.sink.redelivered"] != 5 || got["icerun.sink.commits"] != 2 {
		t.Errorf("counters = %v, want rows 15, redelivered 5, commits 2", got)
	}
	// A closed sink reports no gauges.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if _, ok := m.Data.(metricdata.Gauge[int64]); ok {
				t.Errorf("%s reported after Close", m.Name)
			}
		}
	}
}
