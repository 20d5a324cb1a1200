// Command icerun-bench measures icerun's partition replacement beside
// iceberg-go's own Transaction.Overwrite with a partition filter, on the
// same generated order rows, in the same run, and prints a table of
// figures with ratios against the raw iceberg-go baseline.
//
// Each measurement runs in a child process of its own so that its peak
// RSS (VmHWM) is its own; a figure is the median of 5 such runs (11 for
// the short replace-one-partition runs). The rows scenarios run on all
// cores and again with GOMAXPROCS=1.
//
//	go run ./cmd/icerun-bench [-rows 1000000,5000000] [-partitions 10,1500] [-batch 8192]
package main

import (
	"bufio"
	"cmp"
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
	flag.Parse()
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
			base := run(cores, "raw:"+n+":1:0:1:"+*batchFlag)
			report("raw iceberg-go Overwrite, "+n+" rows, "+where, base, base)
			report("icerun, default writers, "+n+" rows, "+where, run(cores, "icerun:"+n+":1:0:1:"+*batchFlag), base)
			if cores == "" {
				report("icerun, 1 writer, "+n+" rows, "+where, run(cores, "icerun:"+n+":1:1:1:"+*batchFlag), base)
				report("icerun, 2 writers, "+n+" rows, "+where, run(cores, "icerun:"+n+":1:2:1:"+*batchFlag), base)
			}
		}
	}
	var raw0, ice0 result
	for i, p := range strings.Split(*partsFlag, ",") {
		// A replacement of 10,000 rows takes some 30 ms: more runs steady
		// the median.
		raw, ice := runN(11, "", "raw:10000:"+p+":0"), runN(11, "", "icerun:10000:"+p+":0")
		if i == 0 {
			raw0, ice0 = raw, ice
		}
		report("raw, 1 of "+p+" partitions", raw, raw0)
		report("icerun, 1 of "+p+" partitions", ice, ice0)
	}
	fmt.Println("vs raw, cpu/raw: wall-time and CPU ratios to the raw iceberg-go run of the same size and cores (rows) or to the smallest table (partitions); lower is better.")
	fmt.Println("cpu s: user+system CPU of the measured call (input generation included); steadier than wall time on a shared machine.")
	fmt.Println("1 core: the child runs with GOMAXPROCS=1. default writers: no WithParallelWrite (at most GOMAXPROCS encoders).")
}

type result struct {
	secs   float64 // wall time of the measured call
	cpu    float64 // user+system CPU seconds of the measured call
	rows   int64
	peakMB float64
}

func report(name string, r, base result) {
	fmt.Printf("%-44s %8.2f %8.2f %12.0f %8.0f %7.2fx %7.2fx\n", name, r.secs, r.cpu, float64(r.rows)/r.secs, r.peakMB, r.secs/base.secs, r.cpu/base.cpu)
}

// run measures spec five times, each in a fresh process (with GOMAXPROCS
// set to cores unless it is empty), and returns the run with the median
// time.
func run(cores, spec string) result { return runN(5, cores, spec) }

// runN is run with n processes (n odd).
func runN(n int, cores, spec string) result {
	rs := make([]result, n)
	for i := range rs {
		cmd := exec.Command(os.Args[0], "-child", spec)
		if cores != "" {
			cmd.Env = append(os.Environ(), "GOMAXPROCS="+cores)
		}
		out, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "icerun-bench: %s: %v\n", spec, err)
			os.Exit(1)
		}
		fmt.Sscan(string(out), &rs[i].secs, &rs[i].rows, &rs[i].peakMB, &rs[i].cpu)
	}
	slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.secs, b.secs) })
	return rs[n/2]
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
	if path := os.Getenv("ICERUN_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
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
	txn := tbl.NewTransaction()
	if err := txn.Overwrite(ctx, rdr, nil, icetable.WithOverwriteFilter(filter)); err != nil {
		return err
	}
	_, err := txn.Commit(ctx)
	return err
}

// cpuSeconds is the user+system CPU time of this process so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
