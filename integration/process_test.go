//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/internal/enginestest"
	"github.com/icerun/icerun/table"
)

// job is what a writer process does; it travels as JSON in ICERUN_IT_JOB.
type job struct {
	Env   env
	Table string
	Tag   int      // every row's amount_minor: which writer wrote it
	Rows  int      // rows per partition
	Days  []string // partitions replaced, one replacement each, in order
	// Marker, when set, is a file created after KillAfter batches have been
	// handed to the writer; the process then slows down so that the parent
	// can SIGKILL it mid-replace.
	Marker    string
	KillAfter int
	// Rounds, when set, makes a stress writer: in round r it replaces
	// Days[(Index+r) % len(Days)] with Rows rows tagged StressTag(Index, r).
	Rounds int
	Index  int
}

// StressTag is the tag of stress writer i's rows in round r.
func StressTag(i, r int) int { return (i+1)*1000 + r }

// outcome is what a writer process reports on stdout, one JSON per
// replacement.
type outcome struct {
	Day        string
	Tag        int
	Attempts   int
	SnapshotID int64
	Unchanged  bool
	Err        string
}

func TestMain(m *testing.M) {
	if s := os.Getenv(scaleEnv); s != "" {
		os.Exit(runShardWorker(s)) // a backfill worker of scaleout_test.go
	}
	if s := os.Getenv("ICERUN_IT_JOB"); s != "" {
		var j job
		if err := json.Unmarshal([]byte(s), &j); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(2)
		}
		enc := json.NewEncoder(os.Stdout)
		if err := j.run(context.Background(), func(o outcome) { _ = enc.Encode(o) }); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	enginestest.Stop() // if TestDebeziumSink started the engines
	os.Exit(code)
}

// run performs the job's replacements, reporting each on out. A failed
// replacement is reported, not fatal: the stress test counts them.
func (j job) run(ctx context.Context, emit func(outcome)) error {
	cat, err := j.Env.open(ctx)
	if err != nil {
		return err
	}
	w, err := table.Open(ctx, cat, icetable.Identifier{j.Env.NS, j.Table}, table.WithCodeVersion(fmt.Sprintf("writer-%d", j.Tag)), stressRetry)
	if err != nil {
		return err
	}
	type step struct {
		day string
		tag int
	}
	var steps []step
	for _, day := range j.Days {
		steps = append(steps, step{day, j.Tag})
	}
	if j.Rounds > 0 {
		steps = steps[:0]
		for r := range j.Rounds {
			steps = append(steps, step{j.Days[(j.Index+r)%len(j.Days)], StressTag(j.Index, r)})
		}
	}
	for _, s := range steps {
		res, err := replaceTagged(ctx, w, s.day, s.tag, j.Rows, j.Marker, j.KillAfter)
		o := outcome{Day: s.day, Tag: s.tag, Attempts: res.Attempts, SnapshotID: res.SnapshotID, Unchanged: res.Unchanged}
		if err != nil {
			o.Err = err.Error()
		}
		emit(o)
	}
	return nil
}

// stressRetry is a retry budget generous enough for 8 writers on one
// partition.
var stressRetry = table.WithRetry(commit.Policy{Attempts: 200, MinBackoff: 5 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Timeout: 5 * time.Minute})

func mustDay(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

// tagged is n orders of day d whose amount is tag.
func tagged(day string, tag, n int) []orderdata.Order {
	orders := orderdata.Day(mustDay(day), n)
	for i := range orders {
		orders[i].Amount = int64(tag)
	}
	return orders
}

func replaceTagged(ctx context.Context, w *table.Writer, day string, tag, n int, marker string, killAfter int) (commit.Result, error) {
	k, err := w.Key("event_date=" + day)
	if err != nil {
		return commit.Result{}, err
	}
	var rows array.RecordReader = orderdata.Reader(tagged(day, tag, n), 500)
	if marker != "" {
		rows = &slowReader{RecordReader: rows, marker: marker, after: killAfter}
	}
	defer rows.Release()
	return w.ReplacePartition(ctx, k, rows)
}

// slowReader creates marker after `after` batches, then yields one batch
// every 100 ms: a writer that is mid-replace for long enough to be killed.
type slowReader struct {
	array.RecordReader
	marker string
	after  int
	n      int
}

func (r *slowReader) Next() bool {
	r.n++
	if r.n == r.after+1 {
		_ = os.WriteFile(r.marker, nil, 0o644)
	}
	if r.n > r.after {
		time.Sleep(100 * time.Millisecond)
	}
	return r.RecordReader.Next()
}

func (r *slowReader) RecordBatch() arrow.RecordBatch { return r.RecordReader.RecordBatch() }

// start starts the job in a new process of this test binary.
func (j job) start(t testing.TB) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ICERUN_IT_JOB="+string(b))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start writer: %v", err)
	}
	return cmd, &stdout, &stderr
}

// runJobs runs the jobs as concurrent processes and returns every
// replacement's outcome, by job.
func runJobs(t testing.TB, jobs []job) [][]outcome {
	t.Helper()
	type proc struct {
		cmd         *exec.Cmd
		out, errOut *bytes.Buffer
	}
	procs := make([]proc, len(jobs))
	for i, j := range jobs {
		cmd, out, errOut := j.start(t)
		procs[i] = proc{cmd, out, errOut}
	}
	res := make([][]outcome, len(jobs))
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("writer process %d: %v\n%s", i, err, p.errOut)
			continue
		}
		dec := json.NewDecoder(p.out)
		for dec.More() {
			var o outcome
			if err := dec.Decode(&o); err != nil {
				t.Fatalf("writer process %d output: %v", i, err)
			}
			res[i] = append(res[i], o)
		}
	}
	return res
}

// runJobsInProcess runs the jobs as goroutines of this process, each with
// its own catalog handle.
func runJobsInProcess(t testing.TB, jobs []job) [][]outcome {
	t.Helper()
	res := make([][]outcome, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			if err := j.run(context.Background(), func(o outcome) { res[i] = append(res[i], o) }); err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	return res
}

// tagsByDay reads which writer tags each day holds, and how many rows.
func tagsByDay(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) map[string]map[string]int {
	t.Helper()
	out := map[string]map[string]int{}
	for _, line := range lines(scan(t, cat, ident)) {
		cells := bytes.Split(line, []byte("|"))
		day, tag := string(cells[5]), string(cells[2])
		if out[day] == nil {
			out[day] = map[string]int{}
		}
		out[day][tag]++
	}
	return out
}

func lines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func scan(t testing.TB, cat catalog.Catalog, ident icetable.Identifier) []byte {
	t.Helper()
	return catalogtest.CanonicalScan(t, cat, ident)
}
