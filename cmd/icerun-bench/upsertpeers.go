package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

//go:embed peers/upsert_stream.py
var upsertStreamScript []byte

// upsertPeersConfig is the -upsert-peers bench: a backlog of changes of
// the -upsert-stream bench's orders table on one Kafka topic, drained by
// icerun's sink in upsert mode and by Spark Structured Streaming
// (foreachBatch + MERGE INTO), each into its own copy of the table.
type upsertPeersConfig struct {
	brokers    string
	icerun     string // the icerun binary ("": go build)
	python     string // $ICERUN_PYTHON
	sparkJars  string // $ICERUN_SPARK_JARS and $ICERUN_SPARK_KAFKA_JARS
	rows       int64  // orders in each table before the changes
	changes    int64  // the backlog
	maxOffsets int    // Spark's maxOffsetsPerTrigger
	partitions int32
	keys       keyOrder
	interval   time.Duration // icerun's commit interval
	systems    []string      // icerun, spark
	timeout    time.Duration // per drain
}

// upsertPeer is one system's drain of the backlog and the reads after it.
type upsertPeer struct {
	system          string
	prepare         float64 // s to create and load the table
	startup         float64 // s: Spark's JVM start and session (before the drain's clock starts)
	drain           float64 // s from the start of the consumer (Spark: of the query) to the backlog in the table
	cpu             float64 // s of the drain (Spark: python and the JVM's)
	commits         int     // snapshots of the changes (icerun: the sink's commits; Spark: one MERGE per batch)
	other           int     // other snapshots of the drain (icerun's compactions)
	batches         int     // Spark's batches
	peakMB          float64 // the consumer's process tree
	check           upsertTrial
	scan, compact   float64 // Spark's full scan of the table as the drain left it, its rewrite_data_files
	compactedScan   float64 // the full scan after it
	scanStartup     float64
	load1AfterDrain float64
}

func (p upsertPeer) rate(changes int64) float64 { return float64(changes) / p.drain }

// runUpsertPeers prepares a table per system, fills a topic with the
// backlog, drains it with each system in turn, checks and counts each
// table, scans each with Spark before and after compaction, and prints
// the table of figures.
func runUpsertPeers(cfg upsertPeersConfig) error {
	work, done, err := workDir("icerun-bench-upsert-peers-")
	if err != nil {
		return err
	}
	defer done()
	for name, b := range map[string][]byte{"peer.py": peerScript, "upsert_stream.py": upsertStreamScript} {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return err
		}
	}
	if slices.Contains(cfg.systems, "icerun") && cfg.icerun == "" {
		cfg.icerun = filepath.Join(work, "icerun-bin")
		if out, err := exec.Command("go", "build", "-o", cfg.icerun, "github.com/icerun/icerun/cmd/icerun").CombinedOutput(); err != nil {
			return fmt.Errorf("build icerun: %v: %s", err, out)
		}
	}
	before := loadavg()
	fmt.Fprintf(os.Stderr, "icerun-bench: load %s\n", before)
	var peers []upsertPeer
	for _, sys := range cfg.systems {
		p := upsertPeer{system: sys}
		start := time.Now()
		if _, err := upsertChild(upsertPrepConfig(cfg, filepath.Join(work, sys))); err != nil {
			return fmt.Errorf("%s: prepare: %w", sys, err)
		}
		p.prepare = time.Since(start).Seconds()
		fmt.Fprintf(os.Stderr, "icerun-bench: %s: %d orders loaded in %.0f s\n", sys, cfg.rows, p.prepare)
		peers = append(peers, p)
	}
	topic := fmt.Sprintf("orders-changes-%d", time.Now().UnixNano())
	end, err := produceChanges(cfg, topic)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "icerun-bench: %d changes on %s, end offsets %v, load %s\n", cfg.changes, topic, end, loadavg())
	for i := range peers {
		p := &peers[i]
		wh := filepath.Join(work, p.system, "warehouse")
		var err error
		switch p.system {
		case "icerun":
			err = icerunDrain(cfg, work, wh, topic, end, p)
		case "spark":
			err = sparkDrain(cfg, work, wh, topic, end, p)
		default:
			err = fmt.Errorf("unknown system %q (icerun, spark)", p.system)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.system, err)
		}
		p.load1AfterDrain, _ = loadAverage()
		fmt.Fprintf(os.Stderr, "icerun-bench: %s drained %d changes in %.1f s (%.0f/s), load %s\n", p.system, cfg.changes, p.drain, p.rate(cfg.changes), loadavg())
		if err := countAndCheck(cfg, wh, p); err != nil {
			return fmt.Errorf("%s: check: %w", p.system, err)
		}
	}
	for i := range peers {
		p := &peers[i]
		if err := sparkScans(cfg, work, filepath.Join(work, p.system, "warehouse"), p); err != nil {
			return fmt.Errorf("%s: scans: %w", p.system, err)
		}
		fmt.Fprintf(os.Stderr, "icerun-bench: %s's table: scan %.1f s, compacted in %.1f s, scan %.1f s\n", p.system, p.scan, p.compact, p.compactedScan)
	}
	printUpsertPeers(cfg, peers, before, loadavg())
	return nil
}

// upsertPrepConfig is the -upsert-stream preparation of one system's
// table: format v2, merge-on-read, in dir.
func upsertPrepConfig(cfg upsertPeersConfig, dir string) upsertConfig {
	return upsertConfig{Rows: cfg.rows, Keys: cfg.keys, Format: "2", WriteMode: table.ModeMergeOnRead,
		Dir: dir, Op: "prepare", Seed: 1}
}

// changeJSON is the Kafka message of a change: its row as JSON, updated_at
// as RFC 3339 text with microseconds.
func changeJSON(r row) []byte {
	ts := time.UnixMicro(r.updatedAt).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	return []byte(`{"order_id":` + strconv.FormatInt(r.orderID, 10) + `,"version":` + strconv.FormatInt(r.version, 10) +
		`,"status":"` + r.status + `","amount":` + strconv.FormatInt(r.amount, 10) + `,"updated_at":"` + ts + `"}`)
}

// produceChanges creates topic and sends it the backlog: the generator's
// first cfg.changes changes (seed 1), keyed by order_id (so an order's
// changes keep their order in one partition). It returns each partition's
// end offset (the offset after its last message).
func produceChanges(cfg upsertPeersConfig, topic string) (map[int32]int64, error) {
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(cfg.brokers, ",")...),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.MaxBufferedRecords(200_000))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	if err := createTopic(ctx, cl, topic, cfg.partitions); err != nil {
		return nil, err
	}
	var (
		mu   sync.Mutex
		end  = map[int32]int64{}
		fail error
	)
	g := newChangeGen(cfg.keys, cfg.rows, 1)
	for range cfg.changes {
		r := g.changeRow(g.nextChange())
		rec := &kgo.Record{Topic: topic, Key: []byte(strconv.FormatInt(r.orderID, 10)), Value: changeJSON(r)}
		cl.Produce(ctx, rec, func(rec *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fail = err
				return
			}
			end[rec.Partition] = max(end[rec.Partition], rec.Offset+1)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if fail != nil {
		return nil, fmt.Errorf("produce: %w", fail)
	}
	return end, nil
}

// positionsReached reports whether the sink positions recorded in a
// table (sink.PropertyPositions' JSON) reach, for every partition of the
// topic, the offset before end's (the last message's).
func positionsReached(positions, topic string, end map[int32]int64) bool {
	var pos map[string]map[string]struct {
		Offset *int64 `json:"offset"`
	}
	if positions == "" || json.Unmarshal([]byte(positions), &pos) != nil {
		return false
	}
	parts := pos["kafka:"+topic]
	for p, n := range end {
		m, ok := parts[strconv.Itoa(int(p))]
		if !ok || m.Offset == nil || *m.Offset < n-1 {
			return false
		}
	}
	return true
}

// icerunDrain runs `icerun sink` in upsert mode on the topic until the
// table's positions hold every message.
func icerunDrain(cfg upsertPeersConfig, work, wh, topic string, end map[int32]int64, p *upsertPeer) error {
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		return err
	}
	// -keep-snapshots 0: every snapshot stays, as Spark keeps them, so
	// that the commits can be counted.
	cmd := exec.Command(cfg.icerun, "sink", "-warehouse", wh, "-table", strings.Join(upsertIdent, "."),
		"-brokers", cfg.brokers, "-topic", topic, "-group", "icerun-"+topic, "-commit-interval", cfg.interval.String(),
		"-keep-snapshots", "0", "-upsert", "order_id", "-order", "version", "-delete-when", "status=deleted")
	logName := filepath.Join(work, "icerun-sink.log")
	logf, err := os.Create(logName)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	start := time.Now()
	proc, err := startWatched(cmd)
	if err != nil {
		return err
	}
	defer proc.kill()
	deadline := start.Add(cfg.timeout)
	for {
		if tbl, err := cat.LoadTable(ctx, upsertIdent); err == nil && positionsReached(tbl.Properties()[sink.PropertyPositions], topic, end) {
			break
		}
		if !proc.alive() {
			return fmt.Errorf("the sink exited\n%s", tailFile(logName))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the backlog not drained in %s\n%s", cfg.timeout, tailFile(logName))
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.drain = time.Since(start).Seconds()
	p.peakMB = proc.stop()
	if st := proc.cmd.ProcessState; st != nil {
		p.cpu = (st.UserTime() + st.SystemTime()).Seconds()
	}
	return nil
}

// sparkDrainRequest is the request of upsert_stream.py's drain.
type sparkDrainRequest struct {
	Op          string           `json:"op"`
	Dir         string           `json:"dir"`
	Brokers     string           `json:"brokers,omitempty"`
	Topic       string           `json:"topic,omitempty"`
	MaxOffsets  int              `json:"max_offsets,omitempty"`
	EndOffsets  map[string]int64 `json:"end_offsets,omitempty"`
	Checkpoint  string           `json:"checkpoint,omitempty"`
	TimeoutSecs float64          `json:"timeout_secs,omitempty"`
}

// sparkResult is upsert_stream.py's output line.
type sparkResult struct {
	Startup       float64 `json:"startup"`
	Drain         float64 `json:"drain"`
	CPU           float64 `json:"cpu"`
	Batches       int     `json:"batches"`
	Rows          int64   `json:"rows"`
	Scan          float64 `json:"scan"`
	Compact       float64 `json:"compact"`
	CompactedScan float64 `json:"compacted_scan"`
}

func drainRequest(cfg upsertPeersConfig, wh, checkpoint, topic string, end map[int32]int64) sparkDrainRequest {
	eo := map[string]int64{}
	for p, n := range end {
		eo[strconv.Itoa(int(p))] = n
	}
	return sparkDrainRequest{Op: "drain", Dir: wh, Brokers: cfg.brokers, Topic: topic, MaxOffsets: cfg.maxOffsets,
		EndOffsets: eo, Checkpoint: checkpoint, TimeoutSecs: cfg.timeout.Seconds()}
}

// parseSparkResult reads the last line of upsert_stream.py's output.
func parseSparkResult(out []byte) (sparkResult, error) {
	var r sparkResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return r, fmt.Errorf("output %q: %v", tail(string(out), 2000), err)
	}
	return r, nil
}

// runSpark runs upsert_stream.py with req and returns its result and the
// peak RSS of its process tree (python and the JVM).
func runSpark(cfg upsertPeersConfig, work string, req sparkDrainRequest) (sparkResult, float64, error) {
	if cfg.python == "" || cfg.sparkJars == "" {
		return sparkResult{}, 0, errors.New(`spark needs ICERUN_PYTHON, ICERUN_SPARK_JARS and ICERUN_SPARK_KAFKA_JARS: eval "$(scripts/engines)" && eval "$(scripts/spark-kafka)"`)
	}
	spec, err := json.Marshal(req)
	if err != nil {
		return sparkResult{}, 0, err
	}
	cmd := exec.Command(cfg.python, filepath.Join(work, "upsert_stream.py"), string(spec))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "ICERUN_SPARK_JARS="+cfg.sparkJars, "PYTHONPATH="+work, "SPARK_LOCAL_IP=127.0.0.1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, peak, err := runTree(cmd)
	if err != nil {
		return sparkResult{}, 0, fmt.Errorf("%v: %s", err, tail(stderr.String(), 8000))
	}
	r, err := parseSparkResult(out)
	return r, peak, err
}

// sparkDrain runs Spark Structured Streaming on the topic until a batch
// reaches the end offsets.
func sparkDrain(cfg upsertPeersConfig, work, wh, topic string, end map[int32]int64, p *upsertPeer) error {
	r, peak, err := runSpark(cfg, work, drainRequest(cfg, wh, filepath.Join(work, "spark-checkpoint"), topic, end))
	if err != nil {
		return err
	}
	if r.Rows != cfg.changes {
		return fmt.Errorf("the batches read %d messages, want %d", r.Rows, cfg.changes)
	}
	p.startup, p.drain, p.cpu, p.batches, p.peakMB = r.Startup, r.Drain, r.CPU, r.Batches, peak
	return nil
}

// sparkScans scans the table with Spark, compacts it, and scans it again.
func sparkScans(cfg upsertPeersConfig, work, wh string, p *upsertPeer) error {
	r, _, err := runSpark(cfg, work, sparkDrainRequest{Op: "scan", Dir: wh})
	if err != nil {
		return err
	}
	p.scanStartup, p.scan, p.compact, p.compactedScan = r.Startup, r.Scan, r.Compact, r.CompactedScan
	return nil
}

// countAndCheck counts the drain's snapshots and the table's files, and
// compares every row with the state the changes leave.
func countAndCheck(cfg upsertPeersConfig, wh string, p *upsertPeer) error {
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, wh)
	if err != nil {
		return err
	}
	if err := countSnapshots(ctx, cat, p); err != nil {
		return err
	}
	return checkUpsertTable(ctx, cat, upsertConfig{Rows: cfg.rows, Keys: cfg.keys, Seed: 1}, cfg.changes, &p.check)
}

// countSnapshots counts the snapshots after the load's: icerun's sink
// commits record the positions in their summary, its compactions do not;
// every Spark snapshot is a batch's MERGE.
func countSnapshots(ctx context.Context, cat catalog.Catalog, p *upsertPeer) error {
	tbl, err := cat.LoadTable(ctx, upsertIdent)
	if err != nil {
		return err
	}
	snaps := tbl.Metadata().Snapshots()
	for _, s := range snaps {
		switch {
		case s.ParentSnapshotID == nil: // the load
		case p.system == "spark":
			p.commits++
		case s.Summary != nil && s.Summary.Properties[sink.SummaryPositions] != "":
			p.commits++
		default:
			p.other++
		}
	}
	return nil
}

// printUpsertPeers prints the markdown table and the ratios of icerun to
// Spark.
func printUpsertPeers(cfg upsertPeersConfig, peers []upsertPeer, before, after string) {
	fmt.Printf("%d orders (unpartitioned, format v2, merge-on-read, %s keys), a backlog of %d changes (%d%% updates, %d%% deletes, the rest new orders) "+
		"on one topic of %d partitions (JSON, keyed by order_id), embedded SQLite catalog; icerun sink -upsert order_id -order version -delete-when status=deleted, "+
		"commit interval %s; Spark %s local[2], foreachBatch + MERGE INTO, trigger 1 s, maxOffsetsPerTrigger %d\n",
		cfg.rows, cfg.keys, cfg.changes, updatePercent, deletePercent, cfg.partitions, cfg.interval, "4.1 (pyspark 4.1.4, Iceberg 1.12.0)", cfg.maxOffsets)
	fmt.Println("| system | drain | changes/s | vs Spark | commits (other snapshots) | data / delete files at the end | peak RSS | CPU (share of the cores) | table exact | full scan / after compaction (ratio) | load 1 min after the drain |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	si := slices.IndexFunc(peers, func(p upsertPeer) bool { return p.system == "spark" })
	for _, p := range peers {
		vs := "-"
		if si >= 0 {
			vs = fmt.Sprintf("%.2fx", p.rate(cfg.changes)/peers[si].rate(cfg.changes))
		}
		drain := fmt.Sprintf("%.1f s", p.drain)
		if p.system == "spark" {
			drain += fmt.Sprintf(" (+ %.0f s JVM and session; %d batches)", p.startup, p.batches)
		}
		t := p.check
		exact := fmt.Sprintf("yes (%d rows)", t.Rows)
		if t.Mismatches > 0 || t.Rows != t.WantRows {
			exact = fmt.Sprintf("NO: %d rows, want %d, %d mismatches", t.Rows, t.WantRows, t.Mismatches)
		}
		fmt.Printf("| %s | %s | %.0f | %s | %d (%d) | %d / %d | %.0f MB | %.0f s (%.0f%%) | %s | %.1f / %.1f s (%.2fx) | %.1f |\n",
			p.system, drain, p.rate(cfg.changes), vs, p.commits, p.other, t.DataFiles, t.DeleteFiles, p.peakMB,
			p.cpu, 100*p.cpu/p.drain/float64(runtime.NumCPU()), exact, p.scan, p.compactedScan, p.scan/p.compactedScan, p.load1AfterDrain)
		for _, b := range t.FirstBad {
			fmt.Printf("  %s: %s\n", p.system, b)
		}
	}
	fmt.Printf("load before: %s, after: %s (/proc/loadavg 1, 5, 15 min)\n", before, after)
	fmt.Println("drain: from starting the consumer (icerun: the process; Spark: the streaming query, the JVM and session already up) to the table holding the whole backlog")
	fmt.Println("  (icerun: its recorded positions reach every partition's last offset; Spark: a batch reaching them ends). CPU: the drain's (Spark: python and the JVM's).")
	fmt.Println("commits: icerun's sink commits (other: its compactions), Spark's MERGE snapshots. Files: the current snapshot's. Peak RSS: the consumer's process tree")
	fmt.Println("  (Spark: python and the JVM). table exact: every row equal to the state the changes leave. Scans: Spark's full scan to the noop sink of the table")
	fmt.Println("  as the drain left it, and after rewrite_data_files (rewrite-all, remove-dangling-deletes); the ratio: scan / compacted scan.")
	for _, p := range peers {
		fmt.Printf("%s: table prepared in %.0f s; rewrite_data_files %.1f s\n", p.system, p.prepare, p.compact)
	}
}

// checkUpsertPeers checks the -upsert-peers flags.
func checkUpsertPeers(cfg upsertPeersConfig) error {
	if cfg.brokers == "" {
		return errors.New("-upsert-peers needs ICERUN_KAFKA_BROKERS: run under scripts/integration kafka")
	}
	if cfg.keys != timeOrdered && cfg.keys != randomKeys {
		return fmt.Errorf("-upsert-peers-keys %q: want time-ordered or random", cfg.keys)
	}
	if cfg.rows < 1 || cfg.changes < 1 || cfg.maxOffsets < 1 || cfg.partitions < 1 || cfg.interval <= 0 {
		return fmt.Errorf("-upsert-peers-rows %d, -upsert-peers-changes %d, -upsert-peers-batch %d, -upsert-peers-partitions %d, -upsert-interval %s: want each above 0",
			cfg.rows, cfg.changes, cfg.maxOffsets, cfg.partitions, cfg.interval)
	}
	for _, s := range cfg.systems {
		if s != "icerun" && s != "spark" {
			return fmt.Errorf("-upsert-peers-systems: unknown system %q (icerun, spark)", s)
		}
	}
	return nil
}
