package table_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/table"
)

// One log record per commit attempt and per outcome; spans around the
// replacement and its commit; counters of rows, bytes and outcomes.
func TestObservability(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	var logs bytes.Buffer
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	w := open(t, cat, ident, table.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		table.WithTracerProvider(tp), table.WithMeterProvider(mp))
	k := key(t, w, "event_date=2026-07-14")
	for range 2 {
		rows := orderdata.Reader(orderdata.Day(time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), 30), 8)
		_, err := w.ReplacePartition(ctx, k, rows)
		rows.Release()
		require.NoError(t, err)
	}

	var records []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r))
		records = append(records, r)
	}
	var msgs, outcomes []string
	for _, r := range records {
		msgs = append(msgs, r["msg"].(string))
		if r["msg"] == "icerun replace" {
			outcomes = append(outcomes, r["outcome"].(string))
			require.Equal(t, "db.fact_orders", r["table"])
			require.Equal(t, []any{"event_date=2026-07-14"}, r["partitions"])
			require.NotZero(t, r["snapshot"])
			require.EqualValues(t, 1, r["attempts"])
			require.Contains(t, r, "duration")
		}
	}
	// The unchanged rerun committed nothing: it logs its outcome, no commit attempt.
	require.Equal(t, []string{"icerun commit attempt", "icerun replace", "icerun replace"}, msgs)
	require.Equal(t, []string{"committed", "unchanged"}, outcomes)

	names := map[string]int{}
	for _, s := range spans.GetSpans() {
		names[s.Name]++
	}
	require.Equal(t, map[string]int{"icerun.replace": 2, "icerun.commit": 2}, names)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	sums := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					sums[m.Name] += dp.Value
				}
			}
		}
	}
	require.Equal(t, int64(30), sums["icerun.rows"], "rows of the committed replacement only")
	require.Equal(t, int64(2), sums["icerun.commits"])
	require.Positive(t, sums["icerun.bytes"])
}
