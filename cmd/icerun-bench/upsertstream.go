package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// upsertConfig is the -upsert-stream bench: a current-state table of
// tableRows orders (unpartitioned), fed by one sink in upsert mode
// in-process at rate changes/s (80% updates of existing orders, 2%
// deletes, the rest new orders), committing at the sink's own cadence
// (sink.WithCommitInterval), for duration, once per key order.
type upsertConfig struct {
	Rows      int64         `json:"rows"`
	Rate      int           `json:"rate"`
	Interval  time.Duration `json:"interval"`
	Duration  time.Duration `json:"duration"`
	Keys      keyOrder      `json:"keys"`
	Format    string        `json:"format"` // format-version: 2 or 3
	WriteMode string        `json:"write_mode"`
	// TargetFileMB is the table's write.target-file-size-bytes in MiB
	// (0: the default).
	TargetFileMB int64  `json:"target_file_mb"`
	Dir          string `json:"dir"`
	Op           string `json:"op"` // child: prepare or stream
	Seed         uint64 `json:"seed"`
	keyOrders    []keyOrder
}

var upsertIdent = icetable.Identifier{"shop", "orders_current"}

// upsertSpec is the sink's change spec: the latest version of each
// order wins; status=deleted deletes it.
var upsertSpec = table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"version"},
	Delete: table.DeleteWhen{Column: "status", Value: "deleted"}}

// parseUpsertStream checks the -upsert-* flags.
func parseUpsertStream(cfg upsertConfig, keys string) (upsertConfig, error) {
	switch keys {
	case "both":
		cfg.keyOrders = []keyOrder{timeOrdered, randomKeys}
	case string(timeOrdered), string(randomKeys):
		cfg.keyOrders = []keyOrder{keyOrder(keys)}
	default:
		return cfg, fmt.Errorf("-upsert-keys %q: want time-ordered, random or both", keys)
	}
	cfg.Format = strings.TrimPrefix(cfg.Format, "v")
	if cfg.Format != "2" && cfg.Format != "3" {
		return cfg, fmt.Errorf("-upsert-format %q: want v2 or v3", cfg.Format)
	}
	if cfg.WriteMode != table.ModeMergeOnRead && cfg.WriteMode != "copy-on-write" {
		return cfg, fmt.Errorf("-upsert-write %q: want merge-on-read or copy-on-write", cfg.WriteMode)
	}
	if cfg.TargetFileMB < 0 {
		return cfg, fmt.Errorf("-upsert-target-file-mb %d: want 0 (the default) or more", cfg.TargetFileMB)
	}
	if cfg.Rows < 1 || cfg.Rate < 1 || cfg.Interval <= 0 || cfg.Duration <= 0 {
		return cfg, fmt.Errorf("-upsert-rows %d, -upsert-rate %d, -upsert-interval %s, -upsert-duration %s: want each above 0", cfg.Rows, cfg.Rate, cfg.Interval, cfg.Duration)
	}
	return cfg, nil
}

// upsertTrial is what one stream child measured.
type upsertTrial struct {
	Keys        keyOrder  `json:"keys"`
	PrepareSecs float64   `json:"prepare_secs"`
	Changes     int64     `json:"changes"`
	Span        float64   `json:"span"`  // s from the first change offered to the last commit returned
	Drain       float64   `json:"drain"` // s from the end of the offering to the last commit returned
	Commits     int       `json:"commits"`
	CommitMS    []float64 `json:"commit_ms"` // each commit call (its maintenance included)
	Compacted   []bool    `json:"compacted"` // the commit call compacted
	P50         float64   `json:"p50"`       // produce-to-visible, s
	P99         float64   `json:"p99"`
	Max         float64   `json:"max"`
	PeakMB      float64   `json:"peak_mb"`
	CPU         float64   `json:"cpu"` // s of the stream
	Cores       int       `json:"cores"`
	Compactions int64     `json:"compactions"`
	MaintFailed int64     `json:"maintenance_failures"`
	DataFiles   int       `json:"data_files"`
	DeleteFiles int       `json:"delete_files"`
	Snapshots   int       `json:"snapshots"`
	Rows        int64     `json:"rows"` // the table's rows at the end
	WantRows    int64     `json:"want_rows"`
	Mismatches  int64     `json:"mismatches"`
	FirstBad    []string  `json:"first_bad,omitempty"`
	Load1       float64   `json:"load1"`
	Load5       float64   `json:"load5"`
}

// runUpsertStream runs the bench for each key order, each in a fresh
// table, its preparation and its stream in child processes of their own
// (so that the stream's peak RSS is its own), and prints the table.
func runUpsertStream(cfg upsertConfig) error {
	var out []upsertTrial
	for _, k := range cfg.keyOrders {
		tr, err := upsertTrialRun(cfg, k)
		if err != nil {
			return fmt.Errorf("%s keys: %w", k, err)
		}
		out = append(out, tr)
		if b, err := json.Marshal(tr); err == nil {
			fmt.Fprintf(os.Stderr, "%s keys: %s\n", k, b)
		}
	}
	target := "default target file size"
	if cfg.TargetFileMB > 0 {
		target = fmt.Sprintf("target file size %d MiB", cfg.TargetFileMB)
	}
	fmt.Printf("%d orders (unpartitioned), format v%s, %s, %s, %d changes/s offered (%d%% updates, %d%% deletes, the rest new orders), "+
		"commit interval %s (the sink's cadence), %s per run, embedded SQLite catalog, in-process sink.WithUpsert\n",
		cfg.Rows, cfg.Format, cfg.WriteMode, target, cfg.Rate, updatePercent, deletePercent, cfg.Interval, cfg.Duration)
	fmt.Println("| keys | changes/s committed (offered) | drain after the end | produce-to-visible p50 / p99 / max | commits/s | commit p50 / p99 / max | first / last n commits, mean (ratio) | compactions | data / delete files at the end | peak RSS | CPU (share of the cores) | table exact | load 1 / 5 min |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, t := range out {
		ms := slices.Clone(t.CommitMS)
		slices.Sort(ms)
		n := min(100, len(t.CommitMS)/2)
		first, last := sum(t.CommitMS[:n]), sum(t.CommitMS[len(t.CommitMS)-n:])
		exact := fmt.Sprintf("yes (%d rows)", t.Rows)
		if t.Mismatches > 0 || t.Rows != t.WantRows {
			exact = fmt.Sprintf("NO: %d rows, want %d, %d mismatches", t.Rows, t.WantRows, t.Mismatches)
		}
		fmt.Printf("| %s | %.0f (%d) | %.1f s | %.2f / %.2f / %.2f s | %.2f | %.0f / %.0f / %.0f ms | n=%d: %.0f / %.0f ms (%.2fx) | %d | %d / %d | %.0f MB | %.0f s (%.0f%%) | %s | %.1f / %.1f |\n",
			t.Keys, float64(t.Changes)/t.Span, cfg.Rate, t.Drain, t.P50, t.P99, t.Max, float64(t.Commits)/t.Span,
			pick(ms, 0.5), pick(ms, 0.99), pick(ms, 1), n, first/float64(n), last/float64(n), last/first,
			t.Compactions, t.DataFiles, t.DeleteFiles, t.PeakMB, t.CPU, 100*t.CPU/t.Span/float64(t.Cores), exact, t.Load1, t.Load5)
	}
	fmt.Println("first / last n: mean time of a commit call (the sink's commit and the compaction and expiry that follow it) among the first and the last n commits (100, or half the commits when there are fewer than 200).")
	fmt.Println("produce-to-visible: from a change's scheduled production to the return of the commit that holds it. Peak RSS: the stream process's VmHWM.")
	return nil
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// pick is the q quantile of sorted v.
func pick(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(q*float64(len(v))))]
}

// upsertTrialRun prepares a table and streams into it, each in a child.
func upsertTrialRun(cfg upsertConfig, keys keyOrder) (upsertTrial, error) {
	dir, err := os.MkdirTemp("", "icerun-upsert-")
	if err != nil {
		return upsertTrial{}, err
	}
	defer os.RemoveAll(dir)
	cfg.Keys, cfg.Dir, cfg.Seed = keys, dir, 1
	start := time.Now()
	cfg.Op = "prepare"
	if _, err := upsertChild(cfg); err != nil {
		return upsertTrial{}, fmt.Errorf("prepare: %w", err)
	}
	prep := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "%s keys: %d orders loaded in %.0f s\n", keys, cfg.Rows, prep)
	cfg.Op = "stream"
	out, err := upsertChild(cfg)
	if err != nil {
		return upsertTrial{}, fmt.Errorf("stream: %w", err)
	}
	var tr upsertTrial
	if err := json.Unmarshal(out, &tr); err != nil {
		return tr, err
	}
	tr.PrepareSecs = prep
	return tr, nil
}

// upsertChild runs one step of cfg in a child process and returns its
// standard output. A CPU profile ($ICERUN_BENCH_CPUPROFILE) is taken
// of the stream, to the path with the key order appended.
func upsertChild(cfg upsertConfig) ([]byte, error) {
	req, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(os.Args[0], "-upsert-child", string(req))
	cmd.Stderr = os.Stderr
	cmd.Env = os.Environ()
	if p := os.Getenv("ICERUN_BENCH_CPUPROFILE"); p != "" && cfg.Op == "stream" {
		cmd.Env = append(cmd.Env, "ICERUN_BENCH_CPUPROFILE="+p+"."+string(cfg.Keys))
	}
	return cmd.Output()
}

// upsertChildRun is the child: it runs the step req names.
func upsertChildRun(req string) error {
	var cfg upsertConfig
	if err := json.Unmarshal([]byte(req), &cfg); err != nil {
		return err
	}
	ctx := context.Background()
	cat, err := catalogconfig.OpenLocal(ctx, filepath.Join(cfg.Dir, "warehouse"))
	if err != nil {
		return err
	}
	switch cfg.Op {
	case "prepare":
		return upsertPrepare(ctx, cat, cfg)
	case "stream":
		tr, err := upsertStream(ctx, cat, cfg)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(tr)
	}
	return fmt.Errorf("unknown step %q", cfg.Op)
}

// upsertPrepare creates the table and loads its orders in one commit,
// with one encoder (files of the table's target size, in order_id order
// for time-ordered keys, as a bulk load writes them).
func upsertPrepare(ctx context.Context, cat catalog.Catalog, cfg upsertConfig) error {
	if err := cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(upsertIdent), nil); err != nil {
		return err
	}
	props := iceberg.Properties{"format-version": cfg.Format, table.PropertyUpsertMode: cfg.WriteMode}
	if cfg.TargetFileMB > 0 {
		props["write.target-file-size-bytes"] = fmt.Sprint(cfg.TargetFileMB << 20)
	}
	if _, err := cat.CreateTable(ctx, upsertIdent, orderSchema, catalog.WithProperties(props)); err != nil {
		return err
	}
	w, err := table.Open(ctx, cat, upsertIdent, table.WithParallelWrite(1, table.DefaultSplitRows))
	if err != nil {
		return err
	}
	rdr := &loadReader{g: newChangeGen(cfg.Keys, cfg.Rows, cfg.Seed), n: cfg.Rows, batch: 65536, refs: 1}
	defer rdr.Release()
	if _, err := w.ReplacePartitions(ctx, rdr); err != nil {
		return err
	}
	tasks, err := w.Table().Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	for _, t := range tasks {
		fmt.Fprintf(os.Stderr, "%s keys: loaded data file of %d rows, %.1f MB\n", cfg.Keys, t.File.Count(), float64(t.File.FileSizeBytes())/(1<<20))
	}
	return nil
}

// committed is one commit of the stream: the changes [from, to) became
// visible when the call that committed them returned, at end.
type committed struct {
	from, to int64
	end      time.Time
}

// upsertStream offers the changes at cfg.Rate for cfg.Duration to a sink
// in upsert mode and measures, then checks the table.
func upsertStream(ctx context.Context, cat catalog.Catalog, cfg upsertConfig) (upsertTrial, error) {
	tr := upsertTrial{Keys: cfg.Keys}
	s, err := sink.Open(ctx, cat, upsertIdent, sink.WithUpsert(upsertSpec), sink.WithCommitInterval(cfg.Interval))
	if err != nil {
		return tr, err
	}
	stopProfile, err := startProfile()
	if err != nil {
		return tr, err
	}
	stopHeap := startHeapProfile()
	g := newChangeGen(cfg.Keys, cfg.Rows, cfg.Seed)
	sp := sink.SourcePartition{Source: "bench", Partition: 0}
	total := int64(cfg.Rate) * int64(cfg.Duration/time.Second)
	perChange := time.Second / time.Duration(cfg.Rate)
	const maxBatch = 5000
	var (
		commits []committed
		rows    = make([]row, 0, maxBatch)
		offs    = make([]int64, 0, maxBatch)
		from    int64
		begin   time.Time
	)
	// call runs one Write or CommitIfDue and notes the commit it made.
	call := func(f func() error) error {
		before := s.Stats()
		t0 := time.Now()
		err := f()
		end := time.Now()
		after := s.Stats()
		if after.Commits > before.Commits {
			commits = append(commits, committed{from, g.seq, end})
			tr.CommitMS = append(tr.CommitMS, float64(end.Sub(t0).Microseconds())/1000)
			tr.Compacted = append(tr.Compacted, after.Compactions > before.Compactions)
			from = g.seq
			if n := len(commits); n%60 == 0 {
				fmt.Fprintf(os.Stderr, "%s: %d commits, %d changes, last 60 commits %.0f ms mean, lag %.1f s\n",
					cfg.Keys, n, g.seq, sum(tr.CommitMS[n-60:])/60, end.Sub(begin).Seconds()-float64(g.seq)/float64(cfg.Rate))
			}
		}
		return err
	}
	cpu0 := cpuSeconds()
	begin = time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for g.seq < total {
		due := min(total, int64(time.Since(begin)/perChange))
		if due <= g.seq {
			if err := call(func() error { _, err := s.CommitIfDue(ctx); return err }); err != nil {
				return tr, err
			}
			<-tick.C
			continue
		}
		rows, offs = rows[:0], offs[:0]
		for g.seq < due && len(rows) < maxBatch {
			c := g.nextChange()
			rows, offs = append(rows, g.changeRow(c)), append(offs, c.seq)
		}
		rec := batch(rows)
		err := call(func() error { return s.Write(ctx, sp, offs, rec) })
		rec.Release()
		if err != nil {
			return tr, err
		}
	}
	offered := begin.Add(time.Duration(total) * perChange)
	if err := call(func() error { return s.Close(ctx) }); err != nil {
		return tr, err
	}
	if len(commits) == 0 {
		return tr, fmt.Errorf("no commit in %s", cfg.Duration)
	}
	last := commits[len(commits)-1].end
	tr.CPU, tr.Cores = cpuSeconds()-cpu0, runtime.NumCPU()
	tr.PeakMB = peakRSSMB()
	stopHeap()
	stopProfile()
	tr.Changes, tr.Commits = total, len(commits)
	tr.Span, tr.Drain = last.Sub(begin).Seconds(), last.Sub(offered).Seconds()
	tr.P50, tr.P99, tr.Max = visibility(commits, begin, perChange)
	st := s.Stats()
	tr.Compactions, tr.MaintFailed = st.Compactions, st.MaintenanceFailures
	tr.Load1, tr.Load5 = loadAverage()
	return tr, checkUpsertTable(ctx, cat, cfg, total, &tr)
}

// visibility is the p50, p99 and max of the changes' produce-to-visible
// time, in seconds: change i was due at begin + i*perChange and visible
// at the end of the commit that holds it (a histogram of milliseconds,
// so that no per-change figure is kept).
func visibility(commits []committed, begin time.Time, perChange time.Duration) (p50, p99, maxs float64) {
	var hist []int64
	var n int64
	for _, c := range commits {
		for i := c.from; i < c.to; i++ {
			ms := int(c.end.Sub(begin.Add(time.Duration(i) * perChange)).Milliseconds())
			for ms >= len(hist) {
				hist = append(hist, 0)
			}
			hist[max(ms, 0)]++
			n++
		}
	}
	at := func(q float64) float64 {
		want := int64(q * float64(n))
		var seen int64
		for ms, k := range hist {
			if seen += k; seen > want {
				return float64(ms) / 1000
			}
		}
		return float64(len(hist)-1) / 1000
	}
	return at(0.5), at(0.99), float64(len(hist)-1) / 1000
}

// loadAverage is the machine's 1- and 5-minute load average.
func loadAverage() (float64, float64) {
	var l1, l5 float64
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Sscan(string(b), &l1, &l5)
	}
	return l1, l5
}

// checkUpsertTable counts the table's live files and compares every row
// with the state the stream's changes leave (generated again from the
// seed): the table must hold each live order once, at its last change.
func checkUpsertTable(ctx context.Context, cat catalog.Catalog, cfg upsertConfig, changes int64, tr *upsertTrial) error {
	tbl, err := cat.LoadTable(ctx, upsertIdent)
	if err != nil {
		return err
	}
	tr.Snapshots = len(tbl.Metadata().Snapshots())
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return err
	}
	deletes := map[string]bool{}
	for _, t := range tasks {
		for _, d := range slices.Concat(t.DeleteFiles, t.DeletionVectorFiles, t.EqualityDeleteFiles) {
			deletes[deleteFileID(d)] = true
		}
	}
	tr.DataFiles, tr.DeleteFiles = len(tasks), len(deletes)
	want, err := expect(cfg.Keys, cfg.Rows, cfg.Seed, changes)
	if err != nil {
		return err
	}
	tr.WantRows = want.g.live()
	seen := make([]uint64, len(want.last)/64+1)
	_, recs, err := tbl.Scan().ToArrowRecords(ctx)
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) {
		tr.Mismatches++
		if len(tr.FirstBad) < 10 {
			tr.FirstBad = append(tr.FirstBad, fmt.Sprintf(format, args...))
		}
	}
	for rec, err := range recs {
		if err != nil {
			return err
		}
		col := func(name string) int { return rec.Schema().FieldIndices(name)[0] }
		ids, vers := rec.Column(col("order_id")).(*array.Int64), rec.Column(col("version")).(*array.Int64)
		sts, amts := rec.Column(col("status")).(*array.String), rec.Column(col("amount")).(*array.Int64)
		ts := rec.Column(col("updated_at")).(*array.Timestamp)
		for j := range int(rec.NumRows()) {
			tr.Rows++
			i := want.g.orderIndex(ids.Value(j))
			w, ok := want.want(i)
			got := row{ids.Value(j), vers.Value(j), amts.Value(j), sts.Value(j), int64(ts.Value(j))}
			switch {
			case !ok:
				bad("order %d (index %d): in the table, want none", got.orderID, i)
			case seen[i/64]&(1<<(i%64)) != 0:
				bad("order %d: twice", got.orderID)
			case got != w:
				bad("order %d: %+v, want %+v", got.orderID, got, w)
			}
			if ok {
				seen[i/64] |= 1 << (i % 64)
			}
		}
		rec.Release()
	}
	return nil
}

// deleteFileID names a delete file: its path, and for a deletion vector
// the offset of its blob.
func deleteFileID(d iceberg.DataFile) string {
	if off := d.ContentOffset(); off != nil {
		return fmt.Sprintf("%s#%d", d.FilePath(), *off)
	}
	return d.FilePath()
}
