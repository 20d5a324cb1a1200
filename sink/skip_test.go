package sink_test

import (
	"context"
	"slices"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// A skipped message moves the position over it without a row; the commit
// names it in its summary, the stats count it, and a restart resumes past
// it (a redelivery of it is dropped).
func TestSkipMovesThePosition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	reader := sdkmetric.NewManualReader()
	s := mustOpen(t, cat, ident, sink.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	mustWrite(t, s, sp0, 0, 2)
	if err := s.Skip(ctx, sp0, 2); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if st := s.Stats(); st.Skipped != 1 || st.Appended != 2 {
		t.Errorf("stats = %+v, want 1 skipped, 2 appended", st)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	skipped := int64(-1)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "icerun.sink.skipped" && len(sum.DataPoints) == 1 {
				skipped = sum.DataPoints[0].Value
			}
		}
	}
	if skipped != 1 {
		t.Errorf("icerun.sink.skipped = %d, want 1", skipped)
	}
	if got := s.Table().CurrentSnapshot().Summary.Properties[sink.SummarySkipped]; got != "test:events/0@2" {
		t.Errorf("summary %s = %q, want test:events/0@2", sink.SummarySkipped, got)
	}
	r := mustOpen(t, catalogtest.Open(t, dir), ident)
	start, err := r.Start(ctx, sp0)
	if err != nil || start[sp0] != 2 {
		t.Fatalf("Start = %v, %v; want %s at 2 (past the skipped message)", start, err, sp0)
	}
	if err := r.Skip(ctx, sp0, 2); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, r, sp0, 3, 4)
	mustCommit(t, r)
	if st := r.Stats(); st.Skipped != 0 || st.Redelivered != 1 {
		t.Errorf("stats after a redelivered skip = %+v, want 0 skipped, 1 redelivered", st)
	}
	if _, ok := r.Table().CurrentSnapshot().Summary.Properties[sink.SummarySkipped]; ok {
		t.Errorf("a commit without a skip has %s", sink.SummarySkipped)
	}
	if got, w := ids(t, cat, ident), []string{"p0-0", "p0-1", "p0-3"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}
