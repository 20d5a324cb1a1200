//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
)

// chaosTarget is a catalog the chaos runs on: the `icerun sink` processes
// reach it through their flags and environment, the test through open.
type chaosTarget struct {
	name string
	make func(t *testing.T) chaosCatalog
}

// chaosCatalog is one scenario's catalog.
type chaosCatalog struct {
	ns   string
	args []string // flags of icerun sink
	env  []string // environment of icerun sink (added to the test's)
	open func(ctx context.Context) (catalog.Catalog, error)
}

// chaosTargets are the embedded SQLite catalog, and PostgreSQL + S3 when
// scripts/integration runs pg and s3 (configured, as a user would, by
// ICERUN_CATALOG__ variables only).
func chaosTargets(t *testing.T) []chaosTarget {
	out := []chaosTarget{{"sqlite", func(t *testing.T) chaosCatalog {
		wh := filepath.Join(t.TempDir(), "warehouse")
		return chaosCatalog{ns: "db", args: []string{"-warehouse", wh},
			open: func(ctx context.Context) (catalog.Catalog, error) { return catalogconfig.OpenLocal(ctx, wh) }}
	}}}
	uri, s3 := os.Getenv("ICERUN_PG_URI"), os.Getenv("ICERUN_S3_ENDPOINT")
	if uri == "" || s3 == "" {
		t.Log("PostgreSQL + S3 not configured (scripts/integration pg s3 kafka runs it there too)")
		return out
	}
	return append(out, chaosTarget{"pg+s3", func(t *testing.T) chaosCatalog {
		s3p, _ := s3Props()
		props := merge(pgProps(uri, s3Warehouse()), s3p)
		env := []string{"ICERUN_CATALOG=chaos"}
		for k, v := range props {
			if k != "init_catalog_tables" { // not spellable, and the default
				env = append(env, "ICERUN_CATALOG__CHAOS__"+catalogEnvKey(k)+"="+v)
			}
		}
		return chaosCatalog{ns: "it_" + randomID(), env: env,
			open: func(ctx context.Context) (catalog.Catalog, error) { return catalog.Load(ctx, "chaos", props) }}
	}})
}

// closeCatalog closes cat at the end of the test when it holds a
// connection pool.
func closeCatalog(cat catalog.Catalog) {
	if c, ok := cat.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// sinkGroup is the `icerun sink` processes of one consumer group.
type sinkGroup struct {
	t       *testing.T
	cmd     []*exec.Cmd
	out     []*bytes.Buffer // of the running processes
	done    []string        // the output of every process that ended
	kills   int
	pauses  int
	stopped int // processes stopped gracefully
	start   func(i int)
}

// newSinkGroup starts cfg.procs `icerun sink` processes on topic, with
// modeArgs (-key, -upsert ...) after the common flags; with cfg.control
// they are a fleet: members hand over on the control topic topic-control,
// the one holding its partition commits.
func newSinkGroup(t *testing.T, cfg chaosConfig, cc chaosCatalog, ident icetable.Identifier, topic string, modeArgs []string) *sinkGroup {
	g := &sinkGroup{t: t, cmd: make([]*exec.Cmd, cfg.procs), out: make([]*bytes.Buffer, cfg.procs)}
	commitRows := max(500, cfg.messages/200)
	g.start = func(i int) {
		args := append([]string{"sink", strings.Join(ident, "."), "-brokers", cfg.brokers, "-topic", topic,
			"-group", "g-" + topic, "-commit-rows", strconv.Itoa(commitRows), "-commit-interval", cfg.commitInterval.String(),
			"-session-timeout", chaosSession.String()}, cc.args...)
		args = append(args, "-dead-letter", cc.ns+".events_dead")
		if cfg.avro != "" {
			args = append(args, "-format", "avro", "-avro-schemas", cfg.avro)
		}
		if cfg.evolveFrom > 0 {
			args = append(args, "-evolve")
		}
		if cfg.eventTime {
			args = append(args, "-event-time", "event_time", "-allowed-lateness", chaosLateness.String())
		}
		if cfg.control {
			args = append(args, "-control-topic", topic+"-control")
		}
		args = append(args, modeArgs...)
		cmd := exec.Command(cfg.bin, args...)
		cmd.Env = append(os.Environ(), cc.env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		g.cmd[i], g.out[i] = cmd, &out
	}
	for i := range cfg.procs {
		g.start(i)
	}
	return g
}

// killOne SIGKILLs a random process and starts it again.
func (g *sinkGroup) killOne(produced int) {
	i := rand.IntN(len(g.cmd))
	_ = g.cmd[i].Process.Signal(syscall.SIGKILL)
	_ = g.cmd[i].Wait()
	g.done = append(g.done, g.out[i].String())
	g.kills++
	g.t.Logf("SIGKILLed sink %d after %d messages", i, produced)
	time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
	g.start(i)
}

// chaosSession is the sinks' -session-timeout: how long the group waits
// for a silent member before moving its partitions.
const chaosSession = 6 * time.Second

// pauseOne SIGSTOPs a random process for longer than the session timeout
// (the group moves its partitions to the others, which resume from the
// table) and then lets it run on: a zombie holding uncommitted rows of
// partitions it no longer owns, as after a long GC pause or a network
// partition. Its commit or the new owner's is fenced.
func (g *sinkGroup) pauseOne(produced int) {
	i := rand.IntN(len(g.cmd))
	_ = g.cmd[i].Process.Signal(syscall.SIGSTOP)
	g.t.Logf("SIGSTOPped sink %d after %d messages", i, produced)
	time.Sleep(chaosSession + 2*time.Second)
	_ = g.cmd[i].Process.Signal(syscall.SIGCONT)
	g.pauses++
}

// stopAll stops every process with SIGTERM (a graceful stop: commit and
// leave the group); a process that fails fails the test.
func (g *sinkGroup) stopAll() {
	for _, c := range g.cmd {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for i, c := range g.cmd {
		err := c.Wait()
		g.done = append(g.done, g.out[i].String())
		if err != nil {
			g.t.Errorf("sink %d: %v\n%s", i, err, tail(g.out[i].String(), 3000))
		}
	}
	g.stopped, g.cmd = len(g.cmd), nil
}

// killAll ends the processes still running (a failed test).
func (g *sinkGroup) killAll() {
	for i, c := range g.cmd {
		_ = c.Process.Kill()
		_ = c.Wait()
		g.t.Logf("sink %d output (tail):\n%s", i, tail(g.out[i].String(), 2000))
	}
}

// figures counts, over the output of every process that ran, the commits,
// the commits lost to another owner (fenced or conflicting: the sink
// resumed from the table), and the partition assignments.
func (g *sinkGroup) figures() string {
	all := strings.Join(g.done, "\n")
	// The graceful stops log their Stats: rows dropped as redelivered (at
	// or below a position the table held) and as duplicates (keyed).
	var redelivered, dups int
	for _, m := range statsField.FindAllStringSubmatch(all, -1) {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "Redelivered" {
			redelivered += n
		} else {
			dups += n
		}
	}
	return fmt.Sprintf("%d sink commits, %d fleet committer commits, %d failed commits, %d commits lost and resumed from the table, %d compactions, %d assignments, %d processes started; the %d graceful stops dropped %d redelivered rows and %d duplicates",
		strings.Count(all, `msg="sink commit"`), g.committerCommits(), strings.Count(all, `msg="sink commit failed"`), strings.Count(all, "commit lost"),
		strings.Count(all, `msg="sink compaction"`), strings.Count(all, "kafka partitions assigned"), len(g.done), g.stopped, redelivered, dups)
}

// committerCommits counts the fleet committer's commits in the logs of
// the processes that ended (-control-topic).
func (g *sinkGroup) committerCommits() int {
	all := strings.Join(g.done, "\n")
	return strings.Count(all, `msg="sink committer commit"`) + strings.Count(all, `msg="sink committer upsert commit"`)
}

// statsField matches the counters of the Stats a graceful stop logs.
var statsField = regexp.MustCompile(`\b(Redelivered|Duplicates):(\d+)`)

// progress watches the table's row count (the newest snapshot's
// total-records) through a catalog of its own.
type progress struct {
	cat   catalog.Catalog
	ident icetable.Identifier
	ends  func() string // the last offset produced to each partition, for a failure
	// count, when set, is the progress of a table instead of its row count.
	count func(tbl *icetable.Table) int64
}

func newProgress(t *testing.T, cc chaosCatalog, ident icetable.Identifier) *progress {
	cat, err := cc.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeCatalog(cat) })
	return &progress{cat: cat, ident: ident, ends: func() string { return "" }}
}

func (p *progress) rows(t *testing.T) int64 {
	tbl, err := p.cat.LoadTable(context.Background(), p.ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return 0 // not created yet
	}
	if err != nil {
		t.Fatal(err)
	}
	if p.count != nil {
		return p.count(tbl)
	}
	s := tbl.CurrentSnapshot()
	if s == nil || s.Summary == nil {
		return 0
	}
	n, _ := strconv.ParseInt(s.Summary.Properties["total-records"], 10, 64)
	return n
}

// until waits until the table holds at least n rows; it fails the test
// when the count has not moved for two minutes.
func (p *progress) until(t *testing.T, n int64, what string) {
	if !p.reached(t, n, what) {
		t.FailNow()
	}
}

// reached is until that reports the stall (t.Errorf) and returns false,
// so that the caller can check the rows still.
func (p *progress) reached(t *testing.T, n int64, what string) bool {
	last, moved := int64(-1), time.Now()
	for {
		got := p.rows(t)
		if got >= n {
			return true
		}
		if got != last {
			last, moved = got, time.Now()
		}
		if time.Since(moved) > 2*time.Minute {
			var pos any = "none"
			if tbl, err := p.cat.LoadTable(context.Background(), p.ident); err == nil {
				pos, _ = sink.Positions(tbl)
			}
			t.Errorf("waiting for %s: the table holds %d rows, want %d, and has not moved for 2 minutes; its positions: %v; the topic's last offsets: %s",
				what, got, n, pos, p.ends())
			return false
		}
		time.Sleep(500 * time.Millisecond)
	}
}
