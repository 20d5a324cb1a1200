package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal"
)

// sinkConfig is one side-by-side run of the streaming sinks.
type sinkConfig struct {
	brokers     string
	connect     string // scripts/connect
	icerun      string // the icerun binary
	duration    time.Duration
	intervals   []time.Duration
	rate        int // offered messages/s; 0: as fast as the producer goes
	partitions  int32
	systems     []string // icerun, connect
	tasks       int      // Kafka Connect's tasks.max
	workerProps []string // more Kafka Connect worker properties, key=value
	backlog     int64    // > 0: the topic holds this many messages before the sink starts, and nothing more comes
}

// eventsIdent is the table both sinks write, in a warehouse of its own per
// trial.
var eventsIdent = icetable.Identifier{"bench", "events"}

// eventsSchema is the table both sinks write: the message's id, its event
// time (the partition: by day), a payload, and the time it was produced.
var eventsSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "event_ts", Type: iceberg.PrimitiveTypes.TimestampTz},
	iceberg.NestedField{ID: 3, Name: "payload", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 4, Name: "produced_at", Type: iceberg.PrimitiveTypes.TimestampTz},
)

var eventsSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{
	SourceIDs: []int{2}, FieldID: 1000, Name: "event_ts_day", Transform: iceberg.DayTransform{}})

// trial is one system's run at one commit interval.
type trial struct {
	system   string
	interval time.Duration
	measured
	sinkStats
	idleFlush float64 // seconds from the last message sent to the table holding it
}

// runSinkPeers runs every system at every interval, each on a fresh topic
// and table, and prints the table of figures.
func runSinkPeers(cfg sinkConfig) error {
	work, done, err := workDir("icerun-bench-sink-")
	if err != nil {
		return err
	}
	defer done()
	if cfg.icerun == "" {
		cfg.icerun = filepath.Join(work, "icerun")
		if out, err := exec.Command("go", "build", "-o", cfg.icerun, "github.com/icerun/icerun/cmd/icerun").CombinedOutput(); err != nil {
			return fmt.Errorf("build icerun: %v: %s", err, out)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(cfg.brokers, ",")...),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MaxBufferedRecords(200_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	before := loadavg()
	if cfg.backlog > 0 {
		fmt.Printf("load before: %s; a backlog of %d messages per trial, %d partitions\n", before, cfg.backlog, cfg.partitions)
	} else {
		fmt.Printf("load before: %s; offered %s for %s per trial, %d partitions\n", before, rateText(cfg.rate), cfg.duration, cfg.partitions)
	}
	var trials []trial
	for _, iv := range cfg.intervals {
		for _, sys := range cfg.systems {
			t, err := runTrial(cl, cfg, work, sys, iv)
			if err != nil {
				return fmt.Errorf("%s at %s: %w", sys, iv, err)
			}
			trials = append(trials, t)
			fmt.Fprintf(os.Stderr, "icerun-bench: %s at %s: %.0f msg/s, p99 %.2f s, load %s\n", sys, iv, t.rate(), t.p99, loadavg())
		}
	}
	printSinkTrials(trials)
	fmt.Printf("load before: %s, after: %s (/proc/loadavg 1, 5, 15 min)\n", before, loadavg())
	for _, t := range trials {
		if t.check != "" {
			return fmt.Errorf("%s at %s: the table does not hold exactly the produced messages: %s", t.system, t.interval, t.check)
		}
	}
	return nil
}

func rateText(rate int) string {
	if rate <= 0 {
		return "as fast as the producer goes"
	}
	return fmt.Sprintf("%d msg/s", rate)
}

// runTrial runs one system on a fresh topic and table: the sink starts,
// warm-up messages (negative ids) go out once a second until a commit
// shows one, then the measured messages at the offered rate for the
// duration; the sink runs until the table holds every message, and the
// table is checked and measured.
func runTrial(cl *kgo.Client, cfg sinkConfig, work, sys string, iv time.Duration) (trial, error) {
	t := trial{system: sys, interval: iv}
	ctx := context.Background()
	name := fmt.Sprintf("%s-%s-%d", sys, iv, time.Now().UnixNano())
	dir := filepath.Join(work, name)
	cat, err := internal.OpenSQLite(ctx, dir)
	if err != nil {
		return t, err
	}
	if err := cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(eventsIdent), nil); err != nil {
		return t, err
	}
	if _, err := cat.CreateTable(ctx, eventsIdent, eventsSchema, catalog.WithPartitionSpec(&eventsSpec)); err != nil {
		return t, err
	}
	topic := "bench-" + name
	if err := createTopic(ctx, cl, topic, cfg.partitions); err != nil {
		return t, err
	}
	if sys == "connect" { // Iceberg's sink needs its control topic; the broker creates none
		if err := createTopic(ctx, cl, "control-"+name, 1); err != nil {
			return t, err
		}
	}
	cmd, err := sinkCommand(cfg, sys, dir, topic, name, iv)
	if err != nil {
		return t, err
	}
	logf, err := os.Create(filepath.Join(work, name+".log"))
	if err != nil {
		return t, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	p := &producer{cl: cl, topic: topic}
	if cfg.backlog > 0 {
		return backlogTrial(t, cat, cmd, p, cfg.backlog, logf.Name())
	}
	proc, err := startWatched(cmd)
	if err != nil {
		return t, err
	}
	defer proc.kill()
	if err := p.warmUp(ctx, cat, proc, 3*time.Minute); err != nil {
		return t, fmt.Errorf("%w\n%s", err, tailFile(logf.Name()))
	}
	start := time.Now()
	p.run(ctx, cfg.rate, cfg.duration)
	end := time.Now()
	if err := p.keepUp(ctx, cat, proc, cfg.rate, 5*time.Minute+3*iv); err != nil {
		return t, fmt.Errorf("%w\n%s", err, tailFile(logf.Name()))
	}
	if err := cl.Flush(ctx); err != nil {
		return t, err
	}
	idle := time.Now()
	if err := waitRows(ctx, cat, proc, p.total(), 3*time.Minute+3*iv); err != nil {
		return t, fmt.Errorf("%w\n%s", err, tailFile(logf.Name()))
	}
	t.idleFlush = time.Since(idle).Seconds()
	t.measured = measured{outcome: outcome{Wall: end.Sub(start).Seconds()}, peakMB: proc.stop()}
	t.sinkStats, err = tableStats(ctx, cat, p, start, end)
	return t, err
}

// backlogTrial fills the topic with n messages, then starts the sink
// and waits until the table holds them all.
func backlogTrial(t trial, cat catalog.Catalog, cmd *exec.Cmd, p *producer, n int64, logName string) (trial, error) {
	ctx := context.Background()
	for ; p.n < n; p.n++ {
		p.send(ctx, p.n)
	}
	if err := p.cl.Flush(ctx); err != nil {
		return t, err
	}
	start := time.Now()
	proc, err := startWatched(cmd)
	if err != nil {
		return t, err
	}
	defer proc.kill()
	if err := waitRows(ctx, cat, proc, p.total(), 20*time.Minute); err != nil {
		return t, fmt.Errorf("%w\n%s", err, tailFile(logName))
	}
	t.measured = measured{peakMB: proc.stop()}
	t.sinkStats, err = tableStats(ctx, cat, p, start, time.Now())
	t.p50, t.p99 = math.NaN(), math.NaN() // the messages waited in the topic
	t.idleFlush = math.NaN()
	return t, err
}

// sinkCommand is the command line of sys writing topic into the table in
// dir, committing every iv.
func sinkCommand(cfg sinkConfig, sys, dir, topic, name string, iv time.Duration) (*exec.Cmd, error) {
	switch sys {
	case "icerun":
		// -keep-snapshots 0: every snapshot stays, as Kafka Connect's sink
		// keeps them, so that each row's commit time can be read back.
		return exec.Command(cfg.icerun, "sink", "-warehouse", dir, "-table", strings.Join(eventsIdent, "."),
			"-brokers", cfg.brokers, "-topic", topic, "-group", name, "-commit-interval", iv.String(),
			"-keep-snapshots", "0"), nil
	case "connect":
		if cfg.connect == "" {
			return nil, errors.New(`connect needs ICERUN_CONNECT: eval "$(scripts/connect)"`)
		}
		worker, connector, err := connectProperties(cfg, dir, topic, name, iv)
		if err != nil {
			return nil, err
		}
		return exec.Command(cfg.connect, "run", worker, connector), nil
	}
	return nil, fmt.Errorf("unknown system %q (icerun, connect)", sys)
}

func tailFile(path string) string {
	b, _ := os.ReadFile(path)
	return tail(string(b), 4000)
}

// printSinkTrials prints one line per trial and the ratios of icerun to
// Kafka Connect at each interval.
func printSinkTrials(ts []trial) {
	fmt.Printf("%-8s %-8s %9s %9s %8s %8s %9s %6s %9s %8s %7s  %s\n", "interval", "system", "ingest/s", "e2e msg/s", "p50 vis", "p99 vis",
		"commits/s", "files", "manifests", "idle s", "peak MB", "check")
	for _, t := range ts {
		fmt.Printf("%-8s %-8s %9s %9.0f %8s %8s %9.2f %6d %9d %8s %7.0f  %s\n", t.interval, t.system, num(t.ingest, "%.0f"), t.rate(), num(t.p50, "%.2f"), num(t.p99, "%.2f"),
			t.commitsPerSec(), t.files, t.manifests, num(t.idleFlush, "%.1f"), t.peakMB, orText(t.check, fmt.Sprintf("ok: %d rows, each id once", t.totalRows)))
	}
	for _, iv := range uniqueIntervals(ts) {
		i := slices.IndexFunc(ts, func(t trial) bool { return t.interval == iv && t.system == "icerun" })
		c := slices.IndexFunc(ts, func(t trial) bool { return t.interval == iv && t.system == "connect" })
		if i < 0 || c < 0 {
			continue
		}
		a, b := ts[i], ts[c]
		vis := ""
		if !math.IsNaN(a.p99) {
			vis = fmt.Sprintf(", p99 visibility %.2fx", a.p99/b.p99)
		}
		fmt.Printf("icerun / Kafka Connect at %s: ingest %sx, end-to-end %.2fx%s, peak RSS %.2fx\n", iv,
			num(a.ingest/b.ingest, "%.2f"), a.rate()/b.rate(), vis, a.peakMB/b.peakMB)
	}
	fmt.Println("ingest/s: rows added between the first and the last commit made while the measured messages were offered (the table's total-records);")
	fmt.Println("  - with fewer than 3 such commits.")
	fmt.Println("e2e msg/s: measured messages / (the last one visible - the first one produced). vis (s): a row is visible at the timestamp of the snapshot")
	fmt.Println("  that added its data file; p50/p99 of (that timestamp - the row's produced_at) over the measured messages. commits/s: snapshots over that span.")
	fmt.Println("With a backlog: the topic holds the messages before the sink starts; ingest/s is then the drain rate from the sink's first commit")
	fmt.Println("  to its last, e2e msg/s the messages over the time from starting the sink (JVM start included) to the last one visible.")
	fmt.Println("idle s: once the stream stops, seconds until its last message is in the table. files, manifests: the current snapshot's, at the end.")
	fmt.Println("peak MB: the sink process's peak resident set (Connect: the JVM). check: every produced id (warm-up and tail included) in the table exactly once.")
}

// num formats v, or "-" when it is NaN (not measured).
func num(v float64, format string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func uniqueIntervals(ts []trial) []time.Duration {
	var out []time.Duration
	for _, t := range ts {
		if !slices.Contains(out, t.interval) {
			out = append(out, t.interval)
		}
	}
	return out
}

func okText(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// workDir makes a fresh folder for a bench's logs and tables; done
// removes it, unless ICERUN_BENCH_KEEP=1 asks to keep it.
func workDir(prefix string) (dir string, done func(), err error) {
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if os.Getenv("ICERUN_BENCH_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "icerun-bench: keeping %s (logs, tables)\n", dir)
		return dir, func() {}, nil
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}
