// Command icerun-bench measures icerun's partition replacement beside
// iceberg-go's own Transaction.Overwrite with a partition filter, on the
// same generated order rows, in the same run, and prints a table of
// figures with ratios against the raw iceberg-go baseline.
//
// Each measurement runs in a child process of its own so that its peak
// RSS (VmHWM) is its own. The scenarios compared run in turn, round after
// round (5 rounds; 11 for the short replace-one-partition runs), and a
// ratio is the median of the per-round ratios, so that the shared
// machine's changing load falls on both sides. The rows scenarios run on
// all cores and again with GOMAXPROCS=1.
//
//	go run ./cmd/icerun-bench [-rows 1000000,5000000] [-partitions 10,1500] [-batch 8192] [-runs 5]
//
// With -peers it runs instead the side-by-side of engines: icerun, raw
// iceberg-go, PyIceberg 0.12 and Spark (local[2], Iceberg runtime 1.12.0)
// on the same work, and the Parquet floor (arrow-go's pqarrow and pyarrow
// writing the rows to one zstd file, no Iceberg). Every engine reads the
// same input, one Parquet file generated once per size, into a freshly
// prepared table of the embedded SQLite catalog, in a process of its own;
// the peers are peers/peer.py (embedded) run with $ICERUN_PYTHON:
//
//	eval "$(scripts/engines)"
//	go run ./cmd/icerun-bench -peers [-runs 3] [-scenarios replace,dynamic,size,backfill,upsert,upsert10m,upsert10m-new,compact10m,read10m] [-engines ...] [-backfill 400x10000]
//
// Scenarios: replace one day of -rows rows; a dynamic overwrite of 30
// days x 100k rows; replace one day of 10k rows in a table of -partitions
// partitions; a backfill of days x rows, one commit per day (icerun
// backfill.Run with 2 workers and KeepSnapshots 8, a raw iceberg-go loop,
// a PyIceberg loop, a Spark loop of INSERT OVERWRITE); an upsert of 10k
// changed and 10k new orders into a 1M-row day (icerun copy-on-write
// and merge-on-read, icerun-mor; Spark MERGE INTO copy-on-write and
// merge-on-read), and with upsert10m into a 10M-row day (icerun only); with
// upsert10m-new, an upsert of 20k new orders only, above every order of a
// 10M-row day (icerun only). The job is timed from the first read
// of the input to the end of the commit; Spark's JVM start and session
// creation are reported apart. Peak RSS is the whole process tree's.
//
// With -upsert-stream it runs instead the upsert mode's long run: an
// in-process sink in upsert mode (sink.WithUpsert) fed 5,000 changes/s
// (80% updates, 2% deletes) into a current-state table of 10M orders,
// committing every second, for 10 minutes, with time-ordered and with
// random keys; see docs/streaming.md, "Cost over a long run":
//
//	go run ./cmd/icerun-bench -upsert-stream [-upsert-rows 10000000] [-upsert-rate 5000] [-upsert-interval 1s] [-upsert-duration 10m] [-upsert-keys both] [-upsert-format v2] [-upsert-target-file-mb 0]
//
// With -sink-peers it runs instead icerun's Kafka sink (the icerun sink
// binary) beside Apache Iceberg's Kafka Connect sink (scripts/connect:
// iceberg-kafka-connect 1.12.0 on Connect 4.1.1, standalone), each on a
// fresh topic and a fresh table of the embedded SQLite catalog, at each
// commit interval; see docs/streaming.md, "Against Kafka Connect":
//
//	scripts/integration kafka -- bash -c 'eval "$(scripts/connect)" && go run ./cmd/icerun-bench -sink-peers [-sink-rate 10000] [-sink-duration 10m] [-sink-intervals 1s,10s]'
//	... -sink-peers -sink-backlog 1000000   # the drain rate of a full topic instead
//
// With -upsert-peers it runs instead the upsert mode beside Spark
// Structured Streaming (upsertpeers.go; peers/upsert_stream.py): two
// tables of -upsert-peers-rows orders loaded as -upsert-stream loads them
// (format v2, merge-on-read), a backlog of -upsert-peers-changes changes
// of its generator on one topic, drained by `icerun sink -upsert order_id
// -order version -delete-when status=deleted` (commit interval
// -upsert-interval) and by Spark's foreachBatch + MERGE INTO (trigger 1 s,
// maxOffsetsPerTrigger -upsert-peers-batch); each table is checked row by
// row and scanned by Spark before and after rewrite_data_files; see
// docs/streaming.md, "Against Spark":
//
//	scripts/integration kafka -- bash -c 'eval "$(scripts/engines)" && eval "$(scripts/spark-kafka)" && go run ./cmd/icerun-bench -upsert-peers [-upsert-peers-rows 1000000] [-upsert-peers-changes 200000]'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal"
	"github.com/icerun/icerun/table"
)

var day = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

func main() {
	child := flag.String("child", "", "internal: run one measurement (mode:rows:partitions:writers[:partitions per setup commit[:input batch rows]]); writers 0 is the default")
	rowsFlag := flag.String("rows", "1000000,5000000", "partition sizes for the throughput runs")
	partsFlag := flag.String("partitions", "10,1500", "table sizes (partitions) for the replace-one-partition runs")
	batchFlag := flag.String("batch", "8192", "input batch rows for the throughput runs (iceberg-go's writer queues up to 64 batches)")
	runsFlag := flag.Int("runs", 5, "rounds of the throughput runs (the partition runs get twice as many, plus one); -peers: rounds of every scenario")
	peers := flag.Bool("peers", false, "run icerun beside raw iceberg-go, PyIceberg, Spark and the Parquet floor instead; Python from $ICERUN_PYTHON")
	scenarios := flag.String("scenarios", "", "-peers: comma-separated subset of replace,dynamic,size,backfill,upsert,upsert10m,upsert10m-new,compact10m,read10m (default all)")
	enginesFlag := flag.String("engines", "", "-peers: comma-separated subset of icerun,raw,pyiceberg,spark-cow,spark-mor,pqarrow,pyarrow (default all)")
	backfillFlag := flag.String("backfill", "400x10000", "-peers: days x rows per day of the backfill scenario")
	sinkPeers := flag.Bool("sink-peers", false, "run icerun's Kafka sink beside Apache Iceberg's Kafka Connect sink instead; broker from $ICERUN_KAFKA_BROKERS, Connect from $ICERUN_CONNECT")
	sinkDuration := flag.Duration("sink-duration", 10*time.Minute, "-sink-peers: how long each system is offered messages, at each interval")
	sinkIntervals := flag.String("sink-intervals", "1s,10s", "-sink-peers: commit intervals, comma-separated")
	sinkRate := flag.Int("sink-rate", 5000, "-sink-peers: offered messages/s (0: as fast as the producer goes)")
	sinkParts := flag.Int("sink-partitions", 4, "-sink-peers: partitions of each trial's topic")
	sinkSystems := flag.String("sink-systems", "icerun,connect", "-sink-peers: systems to run, in this order: icerun, connect")
	sinkTasks := flag.Int("connect-tasks", 1, "-sink-peers: Kafka Connect's tasks.max")
	sinkBacklog := flag.Int64("sink-backlog", 0, "-sink-peers: instead of offering messages at -sink-rate, fill each trial's topic with this many before the sink starts (the drain rate)")
	workerProps := flag.String("connect-worker", "", "-sink-peers: more Kafka Connect worker properties, key=value,... (e.g. offset.flush.interval.ms=1000)")
	sinkBin := flag.String("icerun", "", "-sink-peers: the icerun binary (default: go build ./cmd/icerun)")
	fleet := flag.String("fleet", "", "run the fleet bench instead: member counts, comma-separated (e.g. 8,32,64), in-process members handing over to one committer (fleet.go)")
	fleetInterval := flag.Duration("fleet-interval", time.Second, "-fleet: the members' and the committer's interval")
	fleetDuration := flag.Duration("fleet-duration", 20*time.Second, "-fleet: how long each run lasts")
	fleetModes := flag.String("fleet-modes", "fleet,own,own-lock", "-fleet: modes to run for each count, in this order: fleet (hand-over to one committer), own (each sink commits on its own), own-lock (the same under the commit lock)")
	upsertStream := flag.Bool("upsert-stream", false, "run the upsert mode's long-run bench instead: an in-process sink.WithUpsert fed changes at -upsert-rate into a table of -upsert-rows orders (upsertstream.go)")
	upsertRows := flag.Int64("upsert-rows", 10_000_000, "-upsert-stream: orders in the table before the stream")
	upsertRate := flag.Int("upsert-rate", 5000, "-upsert-stream: offered changes/s (80% updates, 2% deletes, the rest new orders)")
	upsertInterval := flag.Duration("upsert-interval", time.Second, "-upsert-stream: the sink's commit interval")
	upsertDuration := flag.Duration("upsert-duration", 10*time.Minute, "-upsert-stream: how long changes are offered, per key order")
	upsertKeys := flag.String("upsert-keys", "both", "-upsert-stream: time-ordered, random or both (in this order)")
	upsertFormat := flag.String("upsert-format", "v2", "-upsert-stream: the table's format version, v2 or v3")
	upsertWrite := flag.String("upsert-write", table.ModeMergeOnRead, "-upsert-stream: the table's write.upsert.mode, merge-on-read or copy-on-write")
	upsertFileMB := flag.Int64("upsert-target-file-mb", 0, "-upsert-stream: the table's write.target-file-size-bytes in MiB (0: the default, 512 MiB), for the load and the sink's files and compactions")
	upsertPeers := flag.Bool("upsert-peers", false, "run the upsert mode beside Spark Structured Streaming instead: a backlog of -upsert-peers-changes changes on one Kafka topic drained by icerun's sink in upsert mode and by Spark's foreachBatch + MERGE INTO (upsertpeers.go); broker from $ICERUN_KAFKA_BROKERS, Spark from scripts/engines and scripts/spark-kafka")
	upsertPeersRows := flag.Int64("upsert-peers-rows", 1_000_000, "-upsert-peers: orders in each table before the changes")
	upsertPeersChanges := flag.Int64("upsert-peers-changes", 200_000, "-upsert-peers: the backlog of changes")
	upsertPeersBatch := flag.Int("upsert-peers-batch", 5000, "-upsert-peers: Spark's maxOffsetsPerTrigger")
	upsertPeersParts := flag.Int("upsert-peers-partitions", 4, "-upsert-peers: partitions of the topic")
	upsertPeersKeys := flag.String("upsert-peers-keys", string(timeOrdered), "-upsert-peers: time-ordered or random")
	upsertPeersSystems := flag.String("upsert-peers-systems", "icerun,spark", "-upsert-peers: systems to run, in this order: icerun, spark")
	upsertChild := flag.String("upsert-child", "", "internal: run one -upsert-stream step (JSON request)")
	prep := flag.String("prepare", "", "internal: prepare a peer-bench table (JSON request)")
	run := flag.String("run", "", "internal: run one Go engine's peer-bench step (JSON request)")
	flag.Parse()
	if *prep != "" || *run != "" {
		if err := stepChild(context.Background(), *prep+*run, *prep != ""); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *upsertChild != "" {
		if err := upsertChildRun(*upsertChild); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *upsertStream {
		cfg, err := parseUpsertStream(upsertConfig{Rows: *upsertRows, Rate: *upsertRate, Interval: *upsertInterval,
			Duration: *upsertDuration, Format: *upsertFormat, WriteMode: *upsertWrite, TargetFileMB: *upsertFileMB}, *upsertKeys)
		if err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(2)
		}
		if err := runUpsertStream(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *upsertPeers {
		cfg := upsertPeersConfig{brokers: os.Getenv("ICERUN_KAFKA_BROKERS"), icerun: *sinkBin, python: os.Getenv("ICERUN_PYTHON"),
			rows: *upsertPeersRows, changes: *upsertPeersChanges, maxOffsets: *upsertPeersBatch, partitions: int32(*upsertPeersParts),
			keys: keyOrder(*upsertPeersKeys), interval: *upsertInterval, systems: strings.Split(*upsertPeersSystems, ","), timeout: time.Hour}
		if j, k := os.Getenv("ICERUN_SPARK_JARS"), os.Getenv("ICERUN_SPARK_KAFKA_JARS"); j != "" && k != "" {
			cfg.sparkJars = j + "," + k
		}
		if err := checkUpsertPeers(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(2)
		}
		if err := runUpsertPeers(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *fleet != "" {
		modes, err := parseFleetModes(*fleetModes)
		if err == nil {
			err = runFleet(fleetConfig{members: ints(*fleet), modes: modes, interval: *fleetInterval, duration: *fleetDuration, rows: 500})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *sinkPeers {
		cfg := sinkConfig{brokers: os.Getenv("ICERUN_KAFKA_BROKERS"), connect: os.Getenv("ICERUN_CONNECT"), icerun: *sinkBin,
			duration: *sinkDuration, rate: *sinkRate, partitions: int32(*sinkParts),
			systems: strings.Split(*sinkSystems, ","), tasks: *sinkTasks, backlog: *sinkBacklog}
		if *workerProps != "" {
			cfg.workerProps = strings.Split(*workerProps, ",")
		}
		for _, f := range strings.Split(*sinkIntervals, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil {
				fmt.Fprintln(os.Stderr, "icerun-bench: -sink-intervals:", err)
				os.Exit(2)
			}
			cfg.intervals = append(cfg.intervals, d)
		}
		if cfg.brokers == "" {
			fmt.Fprintln(os.Stderr, "icerun-bench: -sink-peers needs ICERUN_KAFKA_BROKERS: run under scripts/integration kafka")
			os.Exit(2)
		}
		if err := runSinkPeers(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *peers {
		var bfDays, bfRows int
		if _, err := fmt.Sscanf(*backfillFlag, "%dx%d", &bfDays, &bfRows); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench: -backfill:", err)
			os.Exit(2)
		}
		blocks := peerBlocks(ints(*rowsFlag), ints(*partsFlag), bfDays, bfRows, *scenarios, *enginesFlag)
		if err := runPeers(blocks, *runsFlag, os.Getenv("ICERUN_PYTHON")); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *child != "" {
		if err := measure(*child); err != nil {
			fmt.Fprintln(os.Stderr, "icerun-bench:", err)
			os.Exit(1)
		}
		return
	}
	fmt.Printf("%-44s %8s %8s %12s %8s %8s %8s\n", "scenario", "wall s", "cpu s", "rows/s", "peak MB", "vs raw", "cpu/raw")
	for _, cores := range []string{"", "1"} {
		where := "2 cores"
		if cores != "" {
			where = cores + " core"
		}
		for _, n := range strings.Split(*rowsFlag, ",") {
			sc := []scenario{
				{"raw iceberg-go Overwrite, " + n + " rows, " + where, "raw:" + n + ":1:0:1:" + *batchFlag},
				{"icerun, default writers, " + n + " rows, " + where, "icerun:" + n + ":1:0:1:" + *batchFlag},
			}
			if cores == "" {
				sc = append(sc,
					scenario{"icerun, 1 writer, " + n + " rows, " + where, "icerun:" + n + ":1:1:1:" + *batchFlag},
					scenario{"icerun, 2 writers, " + n + " rows, " + where, "icerun:" + n + ":1:2:1:" + *batchFlag})
			}
			names, rs := rounds(*runsFlag, cores, sc)
			report(names, rs, func(int) int { return 0 })
		}
	}
	var sc []scenario
	for _, p := range strings.Split(*partsFlag, ",") {
		sc = append(sc,
			scenario{"raw, 1 of " + p + " partitions", "raw:10000:" + p + ":0"},
			scenario{"icerun, 1 of " + p + " partitions", "icerun:10000:" + p + ":0"})
	}
	// A replacement of 10,000 rows takes some 30 ms: more rounds steady
	// the medians. Each mode's ratio is to its own run on the smallest table.
	names, rs := rounds(2*(*runsFlag)+1, "", sc)
	report(names, rs, func(i int) int { return i % 2 })
	fmt.Println("Scenarios of one block run in turn, round after round, each run in a fresh process; a figure is the median over the rounds.")
	fmt.Println("vs raw, cpu/raw: median over the rounds of the wall-time and CPU ratios to the block's baseline run of the same round:")
	fmt.Println("  raw iceberg-go of the same size and cores (rows), or the same mode on the smallest table (partitions); lower is better.")
	fmt.Println("cpu s: user+system CPU of the measured call (input generation included); steadier than wall time on a shared machine.")
	fmt.Println("1 core: the child runs with GOMAXPROCS=1. default writers: no WithParallelWrite (at most GOMAXPROCS encoders).")
}

type result struct {
	secs   float64 // wall time of the measured call
	cpu    float64 // user+system CPU seconds of the measured call
	rows   int64
	peakMB float64
}

// scenario is one line of the table: its name and the child spec.
type scenario struct{ name, spec string }

// rounds runs every scenario once per round, in turn, each in a fresh
// process (with GOMAXPROCS set to cores unless it is empty), so that a
// change in the machine's load hits every scenario of a round alike. It
// returns the results by scenario, then round.
func rounds(n int, cores string, sc []scenario) (names []string, rs [][]result) {
	rs = make([][]result, len(sc))
	for range n {
		for i, s := range sc {
			rs[i] = append(rs[i], child(cores, s.spec))
		}
	}
	for _, s := range sc {
		names = append(names, s.name)
	}
	return names, rs
}

func child(cores, spec string) result {
	cmd := exec.Command(os.Args[0], "-child", spec)
	if cores != "" {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+cores)
	}
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "icerun-bench: %s: %v\n", spec, err)
		os.Exit(1)
	}
	var r result
	fmt.Sscan(string(out), &r.secs, &r.rows, &r.peakMB, &r.cpu)
	return r
}

// report prints one line per scenario: medians over the rounds, and the
// median of the per-round ratios to scenario base(i).
func report(names []string, rs [][]result, base func(i int) int) {
	for i, name := range names {
		b := rs[base(i)]
		var secs, cpu, peak, tr, cr []float64
		for j, r := range rs[i] {
			secs, cpu, peak = append(secs, r.secs), append(cpu, r.cpu), append(peak, r.peakMB)
			tr, cr = append(tr, r.secs/b[j].secs), append(cr, r.cpu/b[j].cpu)
		}
		rows := float64(rs[i][0].rows)
		fmt.Printf("%-44s %8.2f %8.2f %12.0f %8.0f %7.2fx %7.2fx\n", name, median(secs), median(cpu), rows/median(secs), median(peak), median(tr), median(cr))
	}
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// measure prepares a table with parts partitions, then times replacing one
// partition with rows rows, and prints seconds, rows and peak RSS in MB.
func measure(spec string) error {
	f := strings.Split(spec, ":")
	mode := f[0]
	rows, _ := strconv.Atoi(f[1])
	parts, _ := strconv.Atoi(f[2])
	writers, _ := strconv.Atoi(f[3])
	perCommit := 100000
	if len(f) > 4 {
		perCommit, _ = strconv.Atoi(f[4])
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "icerun-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cat, err := internal.OpenSQLite(ctx, dir)
	if err != nil {
		return err
	}
	ident := icetable.Identifier{"bench", "fact_orders"}
	if err := orderdata.CreateTable(ctx, cat, ident); err != nil {
		return err
	}
	var opts []table.Option
	if writers > 0 {
		opts = append(opts, table.WithParallelWrite(writers, table.DefaultSplitRows))
	}
	w, err := table.Open(ctx, cat, ident, opts...)
	if err != nil {
		return err
	}
	// The table's partitions (the replaced one included), 100 rows each,
	// loaded perCommit partitions a commit (a daily load is 1: one
	// manifest per partition).
	for lo := 0; lo < parts; lo += perCommit {
		var all []orderdata.Order
		for p := lo; p < min(lo+perCommit, parts); p++ {
			all = append(all, orderdata.Day(day.AddDate(0, 0, -p), 100)...)
		}
		rdr := orderdata.Reader(all, 8192)
		if _, err := w.ReplacePartitions(ctx, rdr); err != nil {
			return err
		}
		rdr.Release()
	}
	batch := 8192
	if len(f) > 5 {
		batch, _ = strconv.Atoi(f[5])
	}
	rdr := orderdata.Stream(day, rows, batch)
	defer rdr.Release()
	stop, err := startProfile()
	if err != nil {
		return err
	}
	defer stop()
	start, cpu0 := time.Now(), cpuSeconds()
	switch mode {
	case "icerun":
		key, err := w.Key("event_date=" + day.Format(time.DateOnly))
		if err != nil {
			return err
		}
		if _, err := w.ReplacePartition(ctx, key, rdr); err != nil {
			return err
		}
	case "raw":
		if err := rawOverwrite(ctx, w.Table(), rdr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	fmt.Println(time.Since(start).Seconds(), rows, peakRSSMB(), cpuSeconds()-cpu0)
	return nil
}

// rawOverwrite is the baseline: iceberg-go's own overwrite of the
// partition, by a filter on the partition column.
func rawOverwrite(ctx context.Context, tbl *icetable.Table, rdr array.RecordReader) error {
	filter := iceberg.EqualTo(iceberg.Reference("event_date"), iceberg.Date(int32(day.Unix()/86400)))
	_, err := rawCommit(ctx, tbl, rdr, filter)
	return err
}

// rawCommit overwrites the rows filter matches with rdr in one
// iceberg-go transaction and returns the committed table.
func rawCommit(ctx context.Context, tbl *icetable.Table, rdr array.RecordReader, filter iceberg.BooleanExpression) (*icetable.Table, error) {
	txn := tbl.NewTransaction()
	if err := txn.Overwrite(ctx, rdr, nil, icetable.WithOverwriteFilter(filter)); err != nil {
		return nil, err
	}
	return txn.Commit(ctx)
}

// startProfile starts a CPU profile into $ICERUN_BENCH_CPUPROFILE when it
// is set; stop ends it.
func startProfile() (stop func(), err error) {
	path := os.Getenv("ICERUN_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func ints(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintf(os.Stderr, "icerun-bench: %q: %v\n", s, err)
			os.Exit(2)
		}
		out = append(out, n)
	}
	return out
}

// cpuSeconds is the user+system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSMB() float64 { return float64(statusKB("/proc/self/status", "VmHWM:")[0]) / 1024 }
