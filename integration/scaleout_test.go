//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/catalogconfig/awsconfig"
	"github.com/icerun/icerun/cleanup"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/cputime"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/table"
)

// scaleEnv is the variable that makes this test binary a backfill worker:
// it holds the worker's shardJob as JSON (see TestMain).
const scaleEnv = "ICERUN_IT_SHARD"

// shardJob is one backfill worker process: shard Shard of Shards of the
// days, PerSnapshot keys per snapshot, Rows rows per day.
type shardJob struct {
	Env         env
	Table       string
	Days        []string
	Rows        int
	Shard       int
	Shards      int
	PerSnapshot int
	// StartAt (Unix ms) is when the worker starts its run, so that the
	// processes of one measurement start together once they are up.
	StartAt int64
	// Marker, when set, is created when the job of the key after
	// KillAfter groups starts; that job then yields a batch every 100 ms,
	// so that the parent can SIGKILL the worker mid-group.
	Marker    string
	KillAfter int
	// Lock makes the worker commit under the catalog's commit lock
	// (table.WithCommitLock with catalogconfig.CommitLock: on PostgreSQL
	// an advisory lock on the catalog's database) instead of
	// optimistically only.
	Lock bool
}

// commitModes are the two ways workers commit: optimistic (the catalog's
// compare-and-swap; a lost race is re-planned) and under the PostgreSQL
// commit lock (the workers take turns).
var commitModes = []struct {
	name string
	lock bool
}{{"optimistic", false}, {"lock", true}}

// shardOutcome is what a worker prints on stdout at the end.
type shardOutcome struct {
	Report     backfill.Report
	Start, End int64 // Unix ms of Run's start and end
	// CPU is the CPU time (user + system, ms) the worker process used
	// from Run's start to its end: against End-Start, how much of the
	// run the worker spent computing rather than waiting.
	CPU int64
	Err string
	// Failures are Report.Failed as text (an error does not survive
	// JSON); Report.Failed is cleared.
	Failures []string
}

// runShardWorker is the worker process's main: it runs the job in its
// environment variable and prints the outcome.
func runShardWorker(spec string) int {
	var j shardJob
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, "shard worker:", err)
		return 2
	}
	o, err := j.run(context.Background())
	if err != nil {
		o.Err = err.Error()
	}
	for _, f := range o.Report.Failed {
		o.Failures = append(o.Failures, fmt.Sprintf("%v after %d attempts: %v", f.Keys, f.Attempts, f.Err))
	}
	o.Report.Failed = nil
	if err := json.NewEncoder(os.Stdout).Encode(o); err != nil {
		return 1
	}
	return 0
}

func (j shardJob) run(ctx context.Context) (shardOutcome, error) {
	ctx, err := awsconfig.Context(ctx, j.Env.Props) // one AWS configuration for the run, as cmd/icerun does
	if err != nil {
		return shardOutcome{}, err
	}
	cat, err := j.Env.open(ctx)
	if err != nil {
		return shardOutcome{}, err
	}
	opts := []table.Option{table.WithCodeVersion("scale-v1"), stressRetry}
	if j.Lock {
		lock, closeLock, err := catalogconfig.CommitLock(j.Env.Props)
		if err != nil {
			return shardOutcome{}, err
		}
		defer closeLock()
		opts = append(opts, table.WithCommitLock(lock))
	}
	w, err := table.Open(ctx, cat, icetable.Identifier{j.Env.NS, j.Table}, opts...)
	if err != nil {
		return shardOutcome{}, err
	}
	keys := make([]partition.Key, len(j.Days))
	for i, d := range j.Days {
		if keys[i], err = w.Key("event_date=" + d); err != nil {
			return shardOutcome{}, err
		}
	}
	calls := 0 // the runner calls the jobs of one group in turn, and runs one group at a time
	job := func(_ context.Context, k partition.Key) (array.RecordReader, error) {
		calls++
		d, err := time.Parse("event_date=2006-01-02", k.String())
		if err != nil {
			return nil, err
		}
		var rows array.RecordReader = orderdata.Reader(orderdata.Day(d, j.Rows), max(j.Rows/4, 1))
		if j.Marker != "" && calls == j.KillAfter*j.PerSnapshot+1 {
			rows = &slowReader{RecordReader: rows, marker: j.Marker}
		}
		return rows, nil
	}
	time.Sleep(time.Until(time.UnixMilli(j.StartAt)))
	if dir := os.Getenv("ICERUN_SCALEOUT_PROFILE"); dir != "" {
		// A CPU profile of the run: where the worker computes, beside
		// its CPU time against its wall time.
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d-of-%d-%d.pprof", j.Table, j.Shard, j.Shards, os.Getpid())))
		if err != nil {
			return shardOutcome{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return shardOutcome{}, err
		}
		defer pprof.StopCPUProfile()
	}
	o := shardOutcome{Start: time.Now().UnixMilli()}
	cpu0 := cputime.Process()
	o.Report, err = backfill.Run(ctx, w, keys, job, backfill.WithShard(j.Shard, j.Shards), backfill.WithKeysPerSnapshot(j.PerSnapshot), backfill.WithRetries(3))
	o.End, o.CPU = time.Now().UnixMilli(), (cputime.Process() - cpu0).Milliseconds()
	return o, err
}

// start starts the worker as a new process of this test binary.
func (j shardJob) start(t testing.TB) *shardProc {
	t.Helper()
	b, err := json.Marshal(j)
	require.NoError(t, err)
	p := &shardProc{job: j, cmd: exec.Command(os.Args[0], "-test.run=^$")}
	p.cmd.Env = append(os.Environ(), scaleEnv+"="+string(b))
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	require.NoError(t, p.cmd.Start())
	return p
}

type shardProc struct {
	job         shardJob
	cmd         *exec.Cmd
	out, errOut bytes.Buffer
}

// wait waits for the worker and returns its outcome.
func (p *shardProc) wait(t testing.TB) shardOutcome {
	t.Helper()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("worker %d/%d: %v\n%s", p.job.Shard, p.job.Shards, err, p.errOut.String())
	}
	var o shardOutcome
	require.NoError(t, json.Unmarshal(p.out.Bytes(), &o), "worker %d output %q", p.job.Shard, p.out.String())
	return o
}

// scaleOut is the size of the test; ICERUN_SCALEOUT_KEYS, _ROWS and
// _PER_SNAPSHOT scale it, and ICERUN_SCALEOUT_PROFILE names a folder for
// a CPU profile of every worker (the figures in docs/scale-out.md come from a
// larger run).
func scaleOut(t *testing.T) (keys, rows, perSnapshot int) {
	keys, rows, perSnapshot = 400, 10, 4
	for name, v := range map[string]*int{"ICERUN_SCALEOUT_KEYS": &keys, "ICERUN_SCALEOUT_ROWS": &rows, "ICERUN_SCALEOUT_PER_SNAPSHOT": &perSnapshot} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			require.NoError(t, err, name)
			*v = n
		}
	}
	return keys, rows, perSnapshot
}

// TestScaleOut backfills the same days with one worker process and with 4
// (shard i/4, each its own process and catalog connection), on PostgreSQL
// and S3, the 4 committing optimistically and then under the PostgreSQL
// commit lock. Worker 1 is killed with SIGKILL in the middle of a group and
// started again. Both tables end with the same rows, every day holds
// exactly its rows and is written by exactly one snapshot (lineage), and
// the restarted worker skips what it committed before the kill. The test
// logs the time of each run, the conflicts and the retries; it asserts no
// speed (house rule: speed targets live in benchmarks and reports).
func TestScaleOut(t *testing.T) {
	nkeys, rows, perSnapshot := scaleOut(t)
	eachTarget(t, func(t *testing.T, e env) {
		if e.Target != "pg+s3" {
			t.Skip("scale-out runs on PostgreSQL + S3")
		}
		cat := e.catalog(t)
		base := shardJob{Env: e, Days: days(nkeys), Rows: rows, PerSnapshot: perSnapshot}

		one := base
		one.Table, one.Shards = "scale_1", 1
		e.ordersTable(t, cat, one.Table)
		one.StartAt = time.Now().Add(2 * time.Second).UnixMilli()
		o1 := one.start(t).wait(t)
		require.Empty(t, o1.Err)
		t.Logf("SCALEOUT 1 worker: %d keys, %d commits, %.1f s, %.1f s CPU (%.0f%% of one core)",
			o1.Report.Total, o1.Report.Commits, float64(o1.End-o1.Start)/1e3, float64(o1.CPU)/1e3, 100*float64(o1.CPU)/float64(o1.End-o1.Start))
		want := scan(t, cat, icetable.Identifier{e.NS, one.Table})

		for _, mode := range commitModes {
			t.Run(mode.name, func(t *testing.T) {
				scaleOutFour(t, e, base, mode.lock, o1, want)
			})
		}
	})
}

// scaleOutFour runs the 4 workers of TestScaleOut, worker 1 killed and
// restarted, and checks the table against the one worker's.
func scaleOutFour(t *testing.T, e env, base shardJob, lock bool, o1 shardOutcome, want []byte) {
	cat := e.catalog(t)
	nkeys, rows, perSnapshot, ds := len(base.Days), base.Rows, base.PerSnapshot, base.Days
	alone := time.Duration(o1.End-o1.Start) * time.Millisecond
	const n = 4
	four := base
	four.Table, four.Shards, four.Lock = "scale_4_"+strconv.FormatBool(lock), n, lock
	ident := e.ordersTable(t, cat, four.Table)
	four.StartAt = time.Now().Add(3 * time.Second).UnixMilli()
	procs := make([]*shardProc, n)
	for i := range n {
		j := four
		j.Shard = i
		if i == 1 {
			// Killed a third of the way through its share.
			j.Marker, j.KillAfter = filepath.Join(t.TempDir(), "killme"), max(1, nkeys/n/perSnapshot/3)
		}
		procs[i] = j.start(t)
	}
	killed := procs[1]
	exited := make(chan error, 1)
	go func() { exited <- killed.cmd.Wait() }()
	select {
	case <-marker(killed.job.Marker):
	case err := <-exited:
		t.Fatalf("worker 1 ended before its kill: %v\n%s\n%s", err, killed.out.String(), killed.errOut.String())
	}
	require.NoError(t, killed.cmd.Process.Signal(syscall.SIGKILL))
	err := <-exited
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit) && !exit.Success(), "worker 1 was killed: %v", err)
	restart := killed.job
	restart.Marker, restart.StartAt = "", 0
	procs[1] = restart.start(t)

	outs := make([]shardOutcome, n)
	total, conflicts, retries, commits := 0, 0, 0, 0
	var end int64
	for i, p := range procs {
		outs[i] = p.wait(t)
		o := outs[i]
		require.Empty(t, o.Err, "worker %d", i)
		rep := o.Report
		require.Equal(t, rep.Total, rep.Written+rep.Skipped, "worker %d: %+v", i, rep)
		total += rep.Total
		conflicts += rep.Conflicts
		retries += rep.Retries
		commits += rep.Commits
		end = max(end, o.End)
		t.Logf("SCALEOUT worker %d/%d: %d keys, %d written, %d skipped, %d commits, %d conflicts, %d retries, %.1f s, %.1f s CPU",
			i, n, rep.Total, rep.Written, rep.Skipped, rep.Commits, rep.Conflicts, rep.Retries, float64(o.End-o.Start)/1e3, float64(o.CPU)/1e3)
	}
	require.Equal(t, nkeys, total, "the shards cover every key once")
	require.GreaterOrEqual(t, outs[1].Report.Skipped, killed.job.KillAfter*perSnapshot, "the restarted worker skips the groups committed before the kill")
	together := time.Duration(end-four.StartAt) * time.Millisecond

	// Every day holds exactly its rows: the same as the one-worker table,
	// rows*days rows in all, no order twice.
	got := scan(t, cat, ident)
	require.Equal(t, want, got, "4 workers with a kill and 1 worker leave the same rows")
	require.Len(t, lines(got), nkeys*rows)
	for day, tags := range tagsByDay(t, cat, ident) {
		n := 0
		for _, c := range tags {
			n += c
		}
		require.Equal(t, rows, n, "day %s", day)
	}
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	for _, d := range ds {
		hist := table.History(tbl, "event_date="+d)
		require.Len(t, hist, 1, "day %s: written by exactly one snapshot", d)
		require.Equal(t, "scale-v1", hist[0].CodeVersion)
	}
	orphans, err := cleanup.Orphans(context.Background(), tbl, cleanup.AnyAge())
	require.NoError(t, err)
	t.Logf("SCALEOUT %d keys x %d rows, %d keys per snapshot: 1 worker %.1f s (%d commits); 4 workers (commit lock %t) with one killed and restarted %.1f s (%d commits, %d conflicts re-planned, %d retries): %.2fx; %d files left by the kill for the orphan cleanup",
		nkeys, rows, perSnapshot, alone.Seconds(), o1.Report.Commits, lock, together.Seconds(), commits, conflicts, retries, alone.Seconds()/together.Seconds(), len(orphans.Orphans))
}

// TestScaleOutCommitRate measures the commit rate of the PostgreSQL catalog
// (with a local and an S3 warehouse) as a backfill sees it: 1, 2, 4 and 8
// worker processes, each committing one-row days, one per snapshot,
// optimistically and under the PostgreSQL commit lock. It logs commits/s
// and conflicts; ICERUN_SCALEOUT_COMMITS sets the commits per writer
// (default 6, to keep CI short).
func TestScaleOutCommitRate(t *testing.T) {
	per := 6
	if s := os.Getenv("ICERUN_SCALEOUT_COMMITS"); s != "" {
		var err error
		per, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	eachTarget(t, func(t *testing.T, e env) {
		if e.Target != "pg+s3" && e.Target != "pg" {
			t.Skip("the commit rate is measured on PostgreSQL")
		}
		cat := e.catalog(t)
		for _, mode := range commitModes {
			for _, n := range []int{1, 2, 4, 8} {
				name := fmt.Sprintf("rate_%s_%d", mode.name, n)
				e.ordersTable(t, cat, name)
				// n*per days split into n shards: the shares differ a little,
				// so the rate is the commits over the wall time of the run.
				j := shardJob{Env: e, Table: name, Days: days(n * per), Rows: 1, Shards: n, PerSnapshot: 1, Lock: mode.lock,
					StartAt: time.Now().Add(time.Duration(1+n/2) * time.Second).UnixMilli()}
				procs := make([]*shardProc, n)
				for i := range n {
					j.Shard = i
					procs[i] = j.start(t)
				}
				commits, conflicts := 0, 0
				var end int64
				for i, p := range procs {
					o := p.wait(t)
					require.Empty(t, o.Err, "writer %d", i)
					commits += o.Report.Commits
					conflicts += o.Report.Conflicts
					end = max(end, o.End)
				}
				require.Equal(t, n*per, commits)
				secs := float64(end-j.StartAt) / 1e3
				t.Logf("COMMITRATE %s, %s, %d writers: %d commits in %.2f s = %.1f commits/s, %d conflicts re-planned", e.Target, mode.name, n, commits, secs, float64(commits)/secs, conflicts)
			}
		}
	})
}

// marker is closed once path exists.
func marker(path string) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for {
			if _, err := os.Stat(path); err == nil {
				close(c)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return c
}
