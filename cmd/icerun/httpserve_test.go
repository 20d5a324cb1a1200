package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	icetable "github.com/apache/iceberg-go/table"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/sink/kafka"
)

// get is the status and body of GET url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// `icerun sink -http 127.0.0.1:0` (an unreachable broker, so no partition
// is assigned): /healthz answers 200, /readyz 503 saying no partition is
// assigned, /metrics a Prometheus scrape, parsed with the Prometheus text
// parser, holding the sink's families; SIGTERM then stops it with exit 0.
func TestSinkHTTPEndpoints(t *testing.T) {
	wh := warehouse(t)
	cmd := exec.Command(binary(t), "sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g",
		"-connect-timeout", "0", "-http", "127.0.0.1:0")
	cmd.Dir = wh
	cmd.Env = []string{"HOME=" + wh}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`serving /healthz.* address=(\S+)`)
	var base string
	for sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			base = "http://" + m[1]
			break
		}
	}
	require.NotEmpty(t, base, "no line naming the -http address")
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	code, body := get(t, base+"/healthz")
	require.Equal(t, http.StatusOK, code, body)
	code, body = get(t, base+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, kafka.ErrNotAssigned.Error())

	// The listener serves from before the sink opens the table: its
	// families come once it has.
	var fams map[string]*dto.MetricFamily
	for deadline := time.Now().Add(10 * time.Second); fams["icerun_sink_pending_rows"] == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		code, body := get(t, base+"/metrics")
		require.Equal(t, http.StatusOK, code)
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err = p.TextToMetricFamilies(strings.NewReader(body))
		require.NoError(t, err)
	}
	for _, name := range []string{"icerun_sink_pending_rows", "icerun_sink_pending_bytes", "icerun_sink_last_commit_age_seconds", "icerun_sink_rows_total", "icerun_sink_dead_letters_total", "go_goroutines"} {
		require.Contains(t, fams, name)
	}
	pending := fams["icerun_sink_pending_rows"].GetMetric()
	require.Len(t, pending, 1)
	require.Equal(t, "db.fact_orders", label(pending[0], "icerun_table"))
	require.Zero(t, pending[0].GetGauge().GetValue())

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_ = cmd.Wait()
	require.Equal(t, 0, cmd.ProcessState.ExitCode())
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// An address in use fails the sink at the start (exit 2), naming -http.
func TestSinkHTTPAddressInUse(t *testing.T) {
	wh := warehouse(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	code, _, errs := icerun("sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-http", ln.Addr().String())
	require.Equal(t, exitUsage, code, errs)
	require.Contains(t, errs, "-http 127.0.0.1:")
	require.Contains(t, errs, "address already in use")
}

// The catalog part of readiness: nil while the catalog loads the table,
// an error wrapping errCatalogUnreachable once it fails (an outage of the
// catalog, injected from its next request on).
func TestReadinessProbesCatalog(t *testing.T) {
	ctx := context.Background()
	wh := warehouse(t)
	cat, err := internal.OpenSQLite(ctx, wh)
	require.NoError(t, err)
	ident := icetable.Identifier{"db", "fact_orders"}

	o := &opsServer{status: &kafka.Status{}}
	o.probeCatalog(cat, ident)
	require.NoError(t, o.ready(ctx))
	o.probeCatalog(faults.WrapCatalog(cat, faults.New(faults.Outage, 1)), ident)
	err = o.ready(ctx)
	require.True(t, errors.Is(err, errCatalogUnreachable) && errors.Is(err, faults.ErrInjected), "ready with the catalog down = %v", err)
	// The handler answers 503 with the reason; not assigned comes first.
	require.ErrorIs(t, o.readiness(ctx), kafka.ErrNotAssigned)

	hang := faults.WrapCatalog(cat, faults.New(faults.Hang, 1))
	o.probeCatalog(hang, ident)
	start := time.Now()
	require.ErrorIs(t, o.ready(ctx), errCatalogUnreachable)
	require.Less(t, time.Since(start), catalogProbeWait+2*time.Second, "a hanging catalog answers within catalogProbeWait")
}
