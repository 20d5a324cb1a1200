//go:build integration

package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaSinkHTTP runs `icerun sink -http` against the broker on a topic
// of two partitions: once assigned, /readyz answers 200 and the scrape
// has a high watermark of 0 for each partition before any message (from
// the sink's ListOffsets requests: a fetch brings none); after 30
// messages (20 to partition 0, 10 to partition 1) the lag of each goes
// to 0 with the table's positions at 19 and 9.
func TestKafkaSinkHTTP(t *testing.T) {
	brokers := os.Getenv("ICERUN_KAFKA_BROKERS")
	if brokers == "" {
		if strings.Contains(os.Getenv("ICERUN_TARGETS"), "kafka") {
			t.Fatal("target kafka is set but ICERUN_KAFKA_BROKERS is not")
		}
		t.Skip("no Kafka broker: run under scripts/integration kafka")
	}
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "icerun")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/icerun").CombinedOutput(); err != nil {
		t.Fatalf("build icerun: %v\n%s", err, out)
	}
	_, wh, _, topic, cl := eventsTopic(t, brokers, "http", 2)
	cmd := exec.Command(bin, "sink", "db.events", "-warehouse", wh, "-brokers", brokers, "-topic", topic,
		"-group", "g-"+topic, "-commit-interval", "500ms", "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`serving /healthz.* address=(\S+)`)
	var base string
	for base == "" && sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			base = "http://" + m[1]
		}
	}
	if base == "" {
		t.Fatal("no line naming the -http address")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	waitFor(t, "ready with high watermarks 0 before any message", func() (bool, string) {
		code, body := httpGet(base + "/readyz")
		if code != http.StatusOK {
			return false, body
		}
		fams, text := scrapeText(t, base)
		h0, ok0 := partitionValue(fams, "icerun_kafka_high_watermark", 0)
		h1, ok1 := partitionValue(fams, "icerun_kafka_high_watermark", 1)
		return ok0 && ok1 && h0 == 0 && h1 == 0, text
	})

	var recs []*kgo.Record
	for i := range 30 {
		recs = append(recs, &kgo.Record{Partition: int32(i % 3 / 2), Value: fmt.Appendf(nil, `{"id":"m%d","event_time":"2026-07-14T12:00:00Z"}`, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "lag 0 at positions 19 and 9", func() (bool, string) {
		fams, text := scrapeText(t, base)
		for p, want := range map[int32]float64{0: 19, 1: 9} {
			pos, _ := partitionValue(fams, "icerun_kafka_position", p)
			lag, ok := partitionValue(fams, "icerun_kafka_lag", p)
			if pos != want || !ok || lag != 0 {
				return false, text
			}
		}
		return true, text
	})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("icerun sink after SIGTERM: %v", err)
	}
}

// waitFor polls cond for 30 s; past that it fails, with the last detail.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var detail string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var ok bool
		if ok, detail = cond(); ok {
			return
		}
	}
	t.Fatalf("not %s after 30 s:\n%s", what, tail(detail, 3000))
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// scrapeText is /metrics parsed by the Prometheus text parser, and its text.
func scrapeText(t *testing.T, base string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	code, body := httpGet(base + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d: %s", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams, body
}

// partitionValue is the gauge of family name for partition p.
func partitionValue(fams map[string]*dto.MetricFamily, name string, p int32) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "messaging_destination_partition_id" && l.GetValue() == fmt.Sprint(p) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}
