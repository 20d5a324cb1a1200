package enginestest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
)

// Engines is the client of one engines.py process: one Spark session and
// PyIceberg. It is safe for concurrent use; requests are served one at a
// time.
type Engines struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	logf   string // the process's stderr (JVM and Python logs)
	broken error  // set once the process died or the pipe broke

	catalogs map[string]catalogConfig // configured catalogs by name

	// Requests counts the requests served (a batch counts its members),
	// for the suites' closing figures.
	Requests int
}

// catalogConfig is what a catalog name was configured with.
type catalogConfig struct{ spark, py map[string]string }

var (
	shared     *Engines
	sharedErr  error
	sharedOnce sync.Once
)

// ErrNoEngines is the reason a test skips: the engines are not installed.
var ErrNoEngines = errors.New("enginestest: ICERUN_PYTHON and ICERUN_SPARK_JARS are not set (eval \"$(scripts/engines)\" installs the engines)")

// Get returns the process-wide engines, starting them on first use. It
// skips the test when the engines are not installed, or fails it under
// CI=true ([catalogtest.Refused]).
func Get(t testing.TB) *Engines {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if errors.Is(sharedErr, ErrNoEngines) {
		catalogtest.Refused(t, "%v", sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Running returns the process-wide engines if [Get] started them, else nil.
func Running() *Engines { return shared }

// Stop ends the process-wide engines if they were started (the suites'
// TestMain calls it).
func Stop() {
	if shared != nil {
		shared.close()
	}
}

func start() (*Engines, error) {
	py, jars := os.Getenv("ICERUN_PYTHON"), os.Getenv("ICERUN_SPARK_JARS")
	if py == "" || jars == "" {
		return nil, ErrNoEngines
	}
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "engines.py")
	logDir, err := os.MkdirTemp("", "icerun-engines-")
	if err != nil {
		return nil, fmt.Errorf("enginestest: engines log dir: %w", err)
	}
	e := &Engines{logf: filepath.Join(logDir, "engines.log"), catalogs: map[string]catalogConfig{}}
	logFile, err := os.Create(e.logf)
	if err != nil {
		return nil, fmt.Errorf("enginestest: engines log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(py, "-u", script)
	cmd.Env = append(os.Environ(), "TZ=UTC", "PYSPARK_PYTHON="+py)
	if os.Getenv("ICERUN_INTEROP_VERBOSE") != "" {
		cmd.Stderr = io.MultiWriter(logFile, os.Stderr)
	} else {
		cmd.Stderr = logFile
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("enginestest: start %s %s: %w", py, script, err)
	}
	e.cmd, e.in, e.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	// Start the JVM now, so that the first test does not pay for it alone.
	begin := time.Now()
	if _, err := e.TryDo(Request{"op": "spark_sql", "sql": "SELECT 1"}); err != nil {
		e.close()
		return nil, fmt.Errorf("enginestest: starting Spark: %w", err)
	}
	fmt.Fprintf(os.Stderr, "enginestest: Spark session up in %.1fs (logs: %s)\n", time.Since(begin).Seconds(), e.logf)
	return e, nil
}

func (e *Engines) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cmd == nil {
		return
	}
	_ = e.in.Close() // engines.py stops Spark and exits at EOF
	done := make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = e.cmd.Process.Kill()
		<-done
	}
	e.cmd = nil
}

// TryDo sends one request and reads its answer. A failed answer is an
// error; it does not fail the test (Do does).
func (e *Engines) TryDo(req Request) (Response, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken != nil {
		return Response{}, e.broken
	}
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("enginestest: encode request: %w", err)
	}
	if _, err := e.in.Write(append(b, '\n')); err != nil {
		e.broken = fmt.Errorf("enginestest: engines process: write: %w%s", err, e.logTail())
		return Response{}, e.broken
	}
	line, err := e.out.ReadBytes('\n')
	if err != nil {
		e.broken = fmt.Errorf("enginestest: engines process died: %w%s", err, e.logTail())
		return Response{}, e.broken
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("enginestest: decode answer %.200q: %w", line, err)
	}
	if n := len(resp.Results); n > 0 {
		e.Requests += n
	} else {
		e.Requests++
	}
	if !resp.OK {
		return resp, fmt.Errorf("enginestest: %s failed: %s", req["op"], resp.Error)
	}
	return resp, nil
}

// logTail returns the end of the process's log, for an error message.
func (e *Engines) logTail() string {
	b, err := os.ReadFile(e.logf)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return "\n--- engines log (tail) ---\n" + strings.Join(lines, "\n")
}

// Do sends one request and fails the test if it fails.
func (e *Engines) Do(t testing.TB, req Request) Response {
	t.Helper()
	resp, err := e.TryDo(req)
	if err != nil {
		t.Fatalf("%v\nrequest: %.500v", err, req)
	}
	return resp
}

// Batch sends several requests in one round trip; the answers come in
// order. A failed member fails the test, naming it.
func (e *Engines) Batch(t testing.TB, reqs []Request) []Response {
	t.Helper()
	out, err := e.TryBatch(reqs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TryBatch is Batch that returns the first failure instead of failing.
func (e *Engines) TryBatch(reqs []Request) ([]Response, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	resp, err := e.TryDo(Request{"op": "batch", "requests": reqs})
	if err != nil {
		return nil, err
	}
	out := make([]Response, len(resp.Results))
	for i, raw := range resp.Results {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("enginestest: decode batch answer %d: %w", i, err)
		}
		if !out[i].OK {
			return nil, fmt.Errorf("enginestest: batch request %d (%.300v) failed: %s", i, reqs[i], out[i].Error)
		}
	}
	return out, nil
}

// Configure registers catalog name in Spark (spark.sql.catalog.name.k = v
// for each of spark, on an org.apache.iceberg.spark.SparkCatalog) and in
// PyIceberg (a RestCatalog when py's "type" is "rest", else a SqlCatalog
// with py's properties). Spark keeps a catalog by name for the life of the
// session: configuring a name again with the same properties does nothing,
// with other properties fails the test.
func (e *Engines) Configure(t testing.TB, name string, spark, py map[string]string) {
	t.Helper()
	e.mu.Lock()
	had, ok := e.catalogs[name]
	e.mu.Unlock()
	if ok {
		if !maps.Equal(had.spark, spark) || !maps.Equal(had.py, py) {
			t.Fatalf("enginestest: catalog %s is configured already, with other properties (Spark keeps a catalog by name: use a fresh name)", name)
		}
		return
	}
	e.Do(t, Request{"op": "configure_catalog", "name": name, "spark": spark, "pyiceberg": py})
	e.mu.Lock()
	e.catalogs[name] = catalogConfig{maps.Clone(spark), maps.Clone(py)}
	e.mu.Unlock()
}

// SparkSQL runs one Spark SQL statement and returns its rows.
func (e *Engines) SparkSQL(t testing.TB, sql string) []Row {
	t.Helper()
	return e.Do(t, SparkSQL(sql)).Named()
}

// PyIcebergScan scans table ("ns.t") of catalog cat with PyIceberg.
func (e *Engines) PyIcebergScan(t testing.TB, cat, table string, s Scan) []Row {
	t.Helper()
	return e.Do(t, PyIcebergScan(cat, table, s)).Named()
}

// Inspect returns PyIceberg's metadata table what of table in catalog cat.
func (e *Engines) Inspect(t testing.TB, cat, table, what string) []Row {
	t.Helper()
	return e.Do(t, Inspect(cat, table, what)).Named()
}
