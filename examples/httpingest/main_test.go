package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
)

// serveEnv makes the test binary run the service (main) instead of the
// tests, so that the test can run it as a process and kill it.
const serveEnv = "HTTPINGEST_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// service is one run of the service process.
type service struct {
	cmd  *exec.Cmd
	done chan error
}

func startService(t *testing.T, dir, addr string, interval time.Duration) *service {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-warehouse", dir, "-addr", addr, "-commit-interval", interval.String())
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on") {
		_ = cmd.Process.Kill()
		t.Fatalf("service start: %q, %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	s := &service{cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	return s
}

// freeAddr is a loopback address no one listens on: the service's, kept
// across its restarts so that clients retry on one URL.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Clients post events from many goroutines, retrying every request that
// did not answer 200, while the service is SIGKILLed twice mid-load and
// restarted: every event is in the table exactly once, read back with the
// table's scan. The p99 acknowledgement latency is reported against the
// commit interval.
func TestEveryEventOnceThroughKills(t *testing.T) {
	const interval = 100 * time.Millisecond
	clients, perClient := 12, 120
	if testing.Short() {
		clients, perClient = 4, 40 // still two kills mid-stream, each resumed from the table
	}
	dir, addr := t.TempDir(), freeAddr(t)
	url := "http://" + addr + "/events"
	svc := startService(t, dir, addr, interval)
	defer func() { _ = svc.cmd.Process.Kill() }()

	var (
		acked     atomic.Int64 // events acknowledged
		retries   atomic.Int64
		mu        sync.Mutex
		latencies []time.Duration // of the requests answered 200
	)
	client := &http.Client{Timeout: 10 * time.Second}
	post := func(events []Event) {
		body, _ := json.Marshal(events)
		deadline := time.Now().Add(3 * time.Minute)
		for attempt := 0; ; attempt++ {
			if time.Now().After(deadline) {
				t.Errorf("events %v: no 200 in 3 minutes", events)
				return
			}
			if attempt > 0 {
				retries.Add(1)
				time.Sleep(50 * time.Millisecond)
			}
			start := time.Now()
			resp, err := client.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				continue // refused or reset: the service is down, or was killed mid-request
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
				acked.Add(int64(len(events)))
				return
			}
			if resp.StatusCode == http.StatusBadRequest {
				t.Errorf("events %v: 400", events)
				return
			}
		}
	}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			name := fmt.Sprintf("client-%d", c)
			for seq := 0; seq < perClient; {
				n := min(1+seq%3, perClient-seq) // 1 to 3 events a request
				var events []Event
				for i := range n {
					events = append(events, Event{Client: name, Seq: int64(seq + i), Payload: strings.Repeat("x", 10+seq%7)})
				}
				post(events)
				seq += n
			}
		})
	}
	total := clients * perClient
	for kill := 1; kill <= 2; kill++ {
		for acked.Load() < int64(total*kill/3) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := svc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-svc.done
		t.Logf("SIGKILL %d after %d of %d events acknowledged", kill, acked.Load(), total)
		svc = startService(t, dir, addr, interval)
	}
	wg.Wait()
	if err := svc.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-svc.done; err != nil {
		t.Errorf("service after SIGTERM: %v", err)
	}

	got, files := readEvents(t, dir)
	var missing, twice int
	for c := range clients {
		for seq := range perClient {
			switch n := got[fmt.Sprintf("client-%d/%d", c, seq)]; {
			case n == 0:
				missing++
			case n > 1:
				twice++
			}
		}
	}
	rows := 0
	for _, n := range got {
		rows += n
	}
	if missing != 0 || twice != 0 || rows != total {
		t.Errorf("table: %d rows for %d events, %d missing, %d more than once", rows, total, missing, twice)
	}
	slices.Sort(latencies)
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	t.Logf("%d events in %d requests (%d retries), 2 SIGKILLs: %d rows, %d data files; ack latency p50 %s, p99 %s, max %s, commit interval %s (p99 %.1f intervals)",
		total, len(latencies), retries.Load(), rows, files, p(0.5), p(0.99), latencies[len(latencies)-1], interval, float64(p(0.99))/float64(interval))
}

// readEvents counts the table's rows by "client/seq", read with its scan,
// and its live data files.
func readEvents(t *testing.T, dir string) (map[string]int, int) {
	t.Helper()
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, Table)
	if err != nil {
		t.Fatal(err)
	}
	scan := tbl.Scan(icetable.WithSelectedFields("client", "seq"))
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := scan.ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		cl := rec.Column(rec.Schema().FieldIndices("client")[0]).(*array.String)
		seq := rec.Column(rec.Schema().FieldIndices("seq")[0]).(*array.Int64)
		for i := range int(rec.NumRows()) {
			out[fmt.Sprintf("%s/%d", cl.Value(i), seq.Value(i))]++
		}
		rec.Release()
	}
	return out, len(tasks)
}
