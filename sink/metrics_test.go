package sink_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// The sink's OpenTelemetry counters equal its Stats after every commit,
// with the table as attribute.
func TestMeters(t *testing.T) {
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
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
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
	if got["icerun.sink.rows"] != 15 || got["icerun.sink.redelivered"] != 5 || got["icerun.sink.commits"] != 2 {
		t.Errorf("counters = %v, want rows 15, redelivered 5, commits 2", got)
	}
}
