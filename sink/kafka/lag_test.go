package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// errCatalogDown is the error of a switchCatalog's commits while down.
var errCatalogDown = errors.New("catalog down")

// switchCatalog fails every commit while down is set. Safe for
// concurrent use.
type switchCatalog struct {
	catalog.Catalog
	down atomic.Bool
}

func (c *switchCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.down.Load() {
		return nil, "", errCatalogDown
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// scrape is a Prometheus scrape of the provider whose exporter registered
// on reg, parsed by the Prometheus text parser.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, rec.Body)
	}
	return fams
}

// gauge is the value of family name's point for partition p.
func gauge(fams map[string]*dto.MetricFamily, name string, p int32) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "messaging_destination_partition_id" && l.GetValue() == fmt.Sprint(p) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// An in-process consumer (no broker): assigned partitions 0 and 1, a
// fetch of offsets 0..4 of partition 0 whose high watermark is 10, a
// commit. The scrape has the lag (10 - 4 - 1 = 5) and the table's
// position of partition 0, a position of -1 and no lag for partition 1
// (nothing fetched: its high watermark unknown), and the sink's
// families. Readiness: not before the assignment, then ready, unready
// after UnhealthyFailures commits the catalog refused, ready again once
// one lands.
func TestStatusLagAndReadiness(t *testing.T) {
	ctx := context.Background()
	base, _ := catalogtest.New(t)
	cat := &switchCatalog{Catalog: base}
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true})
	ident := catalogtest.CreateTable(t, cat, "orders", sch, *iceberg.UnpartitionedSpec, nil)

	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	defer mp.Shutdown(ctx)
	c := openConsumer(t, cat, ident, "orders", sink.WithMeterProvider(mp), sink.WithCommitInterval(time.Hour))
	c.assigned, c.status, c.log = map[topicPartition]bool{}, &Status{}, slog.New(slog.DiscardHandler)
	c.status.start(c.s)
	obs, err := c.status.observe(mp, tableName(c.s))
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Unregister()

	if err := c.status.Ready(time.Now()); !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("Ready before the assignment = %v, want ErrNotAssigned", err)
	}
	// A probe and a scraper read while the consumer runs (go test -race
	// checks they may).
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = c.status.Ready(time.Now())
			_ = c.status.Partitions()
			var rm metricdata.ResourceMetrics
			_ = exp.Collect(ctx, &rm)
		}
	})
	defer func() { close(stop); readers.Wait() }()
	c.assign(ctx, nil, map[string][]int32{"orders": {0, 1}})
	if err := c.status.Ready(time.Now()); err != nil {
		t.Fatalf("Ready once assigned = %v", err)
	}
	poll := func(from, to, hwm int64) {
		t.Helper()
		var recs []*kgo.Record
		for o := from; o < to; o++ {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Offset: o, Value: fmt.Appendf(nil, `{"id": "o%d"}`, o)})
		}
		fetches := kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: "orders", Partitions: []kgo.FetchPartition{{Partition: 0, HighWatermark: hwm, Records: recs}}}}}}
		if err := c.handle(ctx, fetches); err != nil {
			t.Fatal(err)
		}
	}
	poll(0, 5, 10)
	if _, err := c.s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, reg)
	for _, name := range []string{
		"icerun_kafka_lag", "icerun_kafka_position", "icerun_kafka_high_watermark",
		"icerun_sink_pending_rows", "icerun_sink_pending_bytes", "icerun_sink_last_commit_age_seconds", "icerun_sink_commit_duration_seconds",
		"icerun_sink_rows_total", "icerun_sink_duplicates_total", "icerun_sink_late_total", "icerun_sink_dead_letters_total",
		"icerun_sink_fenced_total", "icerun_sink_compactions_total", "icerun_sink_commits_total",
	} {
		if fams[name] == nil {
			t.Errorf("the scrape lacks %s", name)
		}
	}
	if fams["icerun_sink_commit_duration_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("icerun_sink_commit_duration_seconds is a %s, want a histogram", fams["icerun_sink_commit_duration_seconds"].GetType())
	}
	for _, tc := range []struct {
		name string
		p    int32
		want float64
		ok   bool
	}{
		{"icerun_kafka_lag", 0, 5, true}, {"icerun_kafka_position", 0, 4, true}, {"icerun_kafka_high_watermark", 0, 10, true},
		{"icerun_kafka_position", 1, -1, true}, {"icerun_kafka_lag", 1, 0, false},
	} {
		if got, ok := gauge(fams, tc.name, tc.p); ok != tc.ok || got != tc.want {
			t.Errorf("%s{partition=%d} = %v (present %v), want %v (present %v)", tc.name, tc.p, got, ok, tc.want, tc.ok)
		}
	}

	cat.down.Store(true)
	for i := range sink.UnhealthyFailures {
		poll(5+int64(i), 6+int64(i), 10)
		if _, err := c.s.Commit(ctx); !errors.Is(err, errCatalogDown) {
			t.Fatalf("commit with the catalog down = %v", err)
		}
		if _, err := c.s.Start(ctx); err != nil { // as reseek does after a failed commit
			t.Fatal(err)
		}
	}
	if err := c.status.Ready(time.Now()); !errors.Is(err, sink.ErrUnhealthy) {
		t.Fatalf("Ready after %d failed commits = %v, want ErrUnhealthy", sink.UnhealthyFailures, err)
	}
	if got, _ := gauge(scrape(t, reg), "icerun_kafka_lag", 0); got != 5 {
		t.Errorf("lag with the catalog down = %v, want 5 (the table holds offset 4)", got)
	}
	cat.down.Store(false)
	poll(5, 10, 12)
	if _, err := c.s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.status.Ready(time.Now()); err != nil {
		t.Fatalf("Ready once a commit landed = %v", err)
	}
	if got, _ := gauge(scrape(t, reg), "icerun_kafka_lag", 0); got != 2 {
		t.Errorf("lag after the commit = %v, want 2 (12 - 9 - 1)", got)
	}
	c.revoke(ctx, nil, map[string][]int32{"orders": {0, 1}})
	if err := c.status.Ready(time.Now()); !errors.Is(err, ErrNotAssigned) {
		t.Fatalf("Ready after the revoke = %v, want ErrNotAssigned", err)
	}
}

func TestRunRefusesANegativeSessionTimeout(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "orders", stopSchema(), *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(t.Context(), cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(t.Context(), s, Config{Brokers: []string{unreachable}, Topic: "t", Group: "g", Format: decode.JSONFormat(), SessionTimeout: -time.Second})
	if !errors.Is(err, ErrConfig) {
		t.Errorf("Run with SessionTimeout -1s = %v, want ErrConfig", err)
	}
}
