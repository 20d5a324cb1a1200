package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP metrics endpoint that keeps the sums of the
// int counters it receives, by name.
type otlpReceiver struct {
	mu   sync.Mutex
	sums map[string]int64
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	var msg colmetrics.ExportMetricsServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	if err != nil || req.URL.Path != "/v1/metrics" {
		http.Error(w, "not an OTLP metrics request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if s := m.GetSum(); s != nil {
					var v int64
					for _, p := range s.DataPoints {
						v += p.GetAsInt()
					}
					r.sums[m.Name] = v // cumulative: the last export holds the total
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	_, _ = w.Write(out)
}

// With OTEL_EXPORTER_OTLP_METRICS_ENDPOINT set, a command exports its
// metrics by OTLP over HTTP when it ends; without it nothing is sent.
func TestCommandExportsMetricsByOTLP(t *testing.T) {
	recv := &otlpReceiver{sums: map[string]int64{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	prev := otel.GetMeterProvider()
	defer otel.SetMeterProvider(prev)

	wh := warehouse(t)
	in := t.TempDir()
	parquetFile(t, filepath.Join(in, "one.parquet"), day, 40)
	replace := []string{"replace", "-warehouse", wh, "-table", "db.fact_orders", "-key", "event_date=2026-07-14", "-file", filepath.Join(in, "one.parquet")}

	code, _, errs := icerun(replace...)
	require.Equal(t, 0, code, errs)
	require.Empty(t, recv.sums, "no endpoint set: nothing exported")

	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", srv.URL+"/v1/metrics")
	parquetFile(t, filepath.Join(in, "one.parquet"), day, 30)
	code, _, errs = icerun(replace...)
	require.Equal(t, 0, code, errs)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	require.Equal(t, int64(30), recv.sums["icerun.rows"], "rows written, as exported: %v", recv.sums)
	require.Equal(t, int64(1), recv.sums["icerun.commits"], "%v", recv.sums)
}
