//go:build interop

package interop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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

	catalogs int // catalogs registered, for fresh names

	// Requests counts the requests served (a batch counts its members),
	// for the suite's closing figures.
	Requests int
}

// Request is one request to engines.py (see its doc for the ops).
type Request map[string]any

// Response is one answer: Columns and Rows for queries.
type Response struct {
	OK      bool              `json:"ok"`
	Error   string            `json:"error"`
	Columns []string          `json:"columns"`
	Rows    [][]any           `json:"rows"`
	Results []json.RawMessage `json:"results"`
}

// Named returns the rows as [Row] maps keyed by column name.
func (r Response) Named() []Row {
	out := make([]Row, len(r.Rows))
	for i, vals := range r.Rows {
		row := make(Row, len(vals))
		for c, v := range vals {
			row[r.Columns[c]] = v
		}
		out[i] = row
	}
	return out
}

var (
	shared     *Engines
	sharedErr  error
	sharedOnce sync.Once
)

// ErrNoEngines is the reason the suite skips: the engines are not installed.
var ErrNoEngines = errors.New("interop: ICERUN_PYTHON and ICERUN_SPARK_JARS are not set (eval \"$(scripts/engines)\" installs the engines)")

// Get returns the process-wide engines, starting them on first use. It
// skips the test when the engines are not installed, or fails it under
// CI=true.
func Get(t testing.TB) *Engines {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if errors.Is(sharedErr, ErrNoEngines) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v, and CI=true requires them", sharedErr)
		}
		t.Skip(sharedErr)
	}
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// Stop ends the process-wide engines if they were started (TestMain calls it).
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
	logDir, err := os.MkdirTemp("", "icerun-interop-")
	if err != nil {
		return nil, fmt.Errorf("interop: engines log dir: %w", err)
	}
	e := &Engines{logf: filepath.Join(logDir, "engines.log")}
	logFile, err := os.Create(e.logf)
	if err != nil {
		return nil, fmt.Errorf("interop: engines log: %w", err)
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
		return nil, fmt.Errorf("interop: start %s %s: %w", py, script, err)
	}
	e.cmd, e.in, e.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	// Start the JVM now, so that the first test does not pay for it alone.
	begin := time.Now()
	if _, err := e.do(Request{"op": "spark_sql", "sql": "SELECT 1"}); err != nil {
		e.close()
		return nil, fmt.Errorf("interop: starting Spark: %w", err)
	}
	fmt.Fprintf(os.Stderr, "interop: Spark session up in %.1fs (logs: %s)\n", time.Since(begin).Seconds(), e.logf)
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

// do sends one request and reads its answer. A failed answer is an error.
func (e *Engines) do(req Request) (Response, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken != nil {
		return Response{}, e.broken
	}
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("interop: encode request: %w", err)
	}
	if _, err := e.in.Write(append(b, '\n')); err != nil {
		e.broken = fmt.Errorf("interop: engines process: write: %w%s", err, e.logTail())
		return Response{}, e.broken
	}
	line, err := e.out.ReadBytes('\n')
	if err != nil {
		e.broken = fmt.Errorf("interop: engines process died: %w%s", err, e.logTail())
		return Response{}, e.broken
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("interop: decode answer %.200q: %w", line, err)
	}
	if n := len(resp.Results); n > 0 {
		e.Requests += n
	} else {
		e.Requests++
	}
	if !resp.OK {
		return resp, fmt.Errorf("interop: %s failed: %s", req["op"], resp.Error)
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
	resp, err := e.do(req)
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
	resp, err := e.do(Request{"op": "batch", "requests": reqs})
	if err != nil {
		return nil, err
	}
	out := make([]Response, len(resp.Results))
	for i, raw := range resp.Results {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, fmt.Errorf("interop: decode batch answer %d: %w", i, err)
		}
		if !out[i].OK {
			return nil, fmt.Errorf("interop: batch request %d (%.300v) failed: %s", i, reqs[i], out[i].Error)
		}
	}
	return out, nil
}

// SparkSQL runs one Spark SQL statement and returns its rows.
func (e *Engines) SparkSQL(t testing.TB, sql string) []Row {
	t.Helper()
	return e.Do(t, SparkSQL(sql)).Named()
}

// SparkSQL is the request for one Spark SQL statement.
func SparkSQL(sql string) Request { return Request{"op": "spark_sql", "sql": sql} }

// Scan is a PyIceberg table scan.
type Scan struct {
	Filter     string   // a PyIceberg expression string ("" for all rows)
	Where      Expr     // or the filter in its JSON form (nil for none)
	SnapshotID int64    // 0 for the current snapshot
	Columns    []string // nil for all columns
}

// PyIcebergScan is the request for a PyIceberg scan of table ("ns.t") in
// catalog cat.
func PyIcebergScan(cat, table string, s Scan) Request {
	req := Request{"op": "pyiceberg_scan", "catalog": cat, "table": table, "filter": nil, "snapshot_id": nil, "columns": nil}
	if s.Filter != "" {
		req["filter"] = s.Filter
	}
	if s.Where != nil {
		req["filter"] = s.Where
	}
	if s.SnapshotID != 0 {
		req["snapshot_id"] = s.SnapshotID
	}
	if s.Columns != nil {
		req["columns"] = s.Columns
	}
	return req
}

// PyIcebergScan scans table ("ns.t") of catalog cat with PyIceberg.
func (e *Engines) PyIcebergScan(t testing.TB, cat, table string, s Scan) []Row {
	t.Helper()
	return e.Do(t, PyIcebergScan(cat, table, s)).Named()
}

// Inspect is the request for a PyIceberg metadata table: what is one of
// snapshots, manifests, files, partitions, entries, history, refs,
// all_manifests.
func Inspect(cat, table, what string) Request {
	return Request{"op": "pyiceberg_inspect", "catalog": cat, "table": table, "what": what}
}

// Inspect returns PyIceberg's metadata table what of table in catalog cat.
func (e *Engines) Inspect(t testing.TB, cat, table, what string) []Row {
	t.Helper()
	return e.Do(t, Inspect(cat, table, what)).Named()
}

// Expr is a PyIceberg filter in its JSON form (engines.py's expr), built
// with typed values so that any value crosses the pipe exactly.
type Expr map[string]any

// Cmp is col <op> value, op one of eq, ne, lt, le, gt, ge; value is typed.
func Cmp(col, op, value string) Expr { return Expr{"op": op, "col": col, "value": value} }

// IsNull is col IS NULL.
func IsNull(col string) Expr { return Expr{"op": "is_null", "col": col} }

// IsNaN is col IS NaN.
func IsNaN(col string) Expr { return Expr{"op": "is_nan", "col": col} }

// And is the conjunction of args.
func And(args ...Expr) Expr { return Expr{"op": "and", "args": args} }
