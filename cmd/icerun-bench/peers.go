package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

//go:embed peers/peer.py
var peerScript []byte

// block is one scenario of the peer table: its input, the table it
// starts from, and the engines that run it in turn, round after round.
type block struct {
	name     string
	scenario string // request.Scenario
	in       input
	prep     request // Parts and DayRows of the starting table
	engines  []string
}

// peerBlocks are the scenarios of the peer table for the given sizes.
func peerBlocks(rows []int, parts []int, bfDays, bfRows int, only, engines string) []block {
	var bs []block
	want := func(s string) bool { return only == "" || slices.Contains(strings.Split(only, ","), s) }
	defer func() {
		for i := range bs {
			bs[i].engines = slices.DeleteFunc(bs[i].engines, func(e string) bool {
				return e != "icerun" && engines != "" && !slices.Contains(strings.Split(engines, ","), e)
			})
		}
	}()
	if want("replace") {
		for _, n := range rows {
			bs = append(bs, block{fmt.Sprintf("1. replace 1 day, %s rows", count(n)), "replace",
				input{fmt.Sprintf("day-%d", n), 1, n, false, false}, request{Parts: 1},
				[]string{"icerun", "raw", "pyiceberg", "spark-cow", "pqarrow", "pyarrow"}})
		}
	}
	if want("dynamic") {
		bs = append(bs, block{"2. dynamic overwrite, 30 days x 100k rows", "dynamic",
			input{"days-30x100000", 30, 100_000, false, false}, request{Parts: 30},
			[]string{"icerun", "raw", "pyiceberg", "spark-cow"}})
	}
	if want("size") {
		for _, p := range parts {
			bs = append(bs, block{fmt.Sprintf("3. replace 1 of %s partitions, 10k rows", count(p)), "replace",
				input{"day-10000", 1, 10_000, false, false}, request{Parts: p},
				[]string{"icerun", "raw", "pyiceberg", "spark-cow"}})
		}
	}
	if want("backfill") {
		bs = append(bs, block{fmt.Sprintf("4. backfill %d days x %s rows, 1 commit/day", bfDays, count(bfRows)), "backfill",
			input{fmt.Sprintf("days-%dx%d", bfDays, bfRows), bfDays, bfRows, false, false}, request{},
			[]string{"icerun", "raw", "pyiceberg", "spark-cow"}})
	}
	if want("upsert") {
		bs = append(bs, block{"5. upsert 10k changed + 10k new into 1M rows", "upsert",
			input{"upsert-1000000", 1, 1_000_000, true, false}, request{DayRows: 1_000_000},
			[]string{"icerun", "icerun-mor", "pyiceberg", "spark-cow", "spark-mor"}})
	}
	if want("upsert10m") {
		bs = append(bs, block{"6. upsert 10k changed + 10k new into 10M rows", "upsert",
			input{"upsert-10000000", 1, 10_000_000, true, false}, request{DayRows: 10_000_000},
			[]string{"icerun", "icerun-mor", "pyiceberg", "spark-cow", "spark-mor"}})
	}
	for _, f := range []string{"2", "3"} {
		if want("compact10m") {
			bs = append(bs, block{"8. compact 10M rows + 20 upserts, v" + f, "compact",
				input{"day-10000", 1, 10_000, false, false}, request{DayRows: 10_000_000, MORUpserts: 20, Format: f},
				[]string{"icerun", "spark-compact"}})
		}
		if want("read10m") {
			bs = append(bs, block{"9. Spark full scan, 10M rows + 20 upserts, v" + f, "scan",
				input{"day-10000", 1, 10_000, false, false}, request{DayRows: 10_000_000, MORUpserts: 20, Format: f},
				[]string{"spark-scan-mor", "spark-scan-compacted"}})
		}
	}
	if want("upsert10m-new") {
		bs = append(bs, block{"7. upsert 20k new into 10M rows", "upsert",
			input{name: "upsert-new-10000000", days: 1, perDay: 10_000_000, upsert: true, newOnly: true}, request{DayRows: 10_000_000},
			[]string{"icerun", "icerun-mor"}})
	}
	return bs
}

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// measured is one engine's run of one round.
type measured struct {
	outcome
	peakMB float64
}

// runPeers runs every block's engines in turn, round after round, each in
// a fresh process on a freshly prepared table, and prints the table.
func runPeers(blocks []block, runs int, python string) error {
	work, err := os.MkdirTemp("", "icerun-bench-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	script := filepath.Join(work, "peer.py")
	if err := os.WriteFile(script, peerScript, 0o644); err != nil {
		return err
	}
	before := loadavg()
	fmt.Printf("load before: %s\n", before)
	fmt.Printf("%-48s %-10s %16s %7s %14s %8s  %s\n", "scenario", "engine", "wall s (min-max)", "cpu s", "peak MB", "vs icerun", "notes")
	for _, b := range blocks {
		path, err := b.in.generate(work)
		if err != nil {
			return fmt.Errorf("input %s: %w", b.in.name, err)
		}
		res := make([][]measured, len(b.engines))
		for round := range runs {
			for i, eng := range b.engines {
				m, err := runStep(work, script, python, b, eng, path, round)
				if err != nil {
					return fmt.Errorf("%s, %s, round %d: %w", b.name, eng, round+1, err)
				}
				res[i] = append(res[i], m)
			}
		}
		printBlock(b, res)
	}
	fmt.Printf("load before: %s, after: %s (/proc/loadavg 1, 5, 15 min)\n", before, loadavg())
	fmt.Println("Engines run in turn, round after round, each in a fresh process on a fresh table; a figure is the median over the rounds, (min-max) its spread.")
	fmt.Println("wall, cpu: the job, from the first read of the input to the end of the commit (cpu: the process's, plus the JVM's for Spark).")
	fmt.Println("peak MB: the whole process tree's resident set (Spark: python and the JVM, startup included). vs icerun: median of the per-round wall-time ratios.")
	return nil
}

// runStep prepares a fresh table for b and times eng's run of it.
func runStep(work, script, python string, b block, eng, input string, round int) (measured, error) {
	var m measured
	dir := filepath.Join(work, fmt.Sprintf("wh-%s-%d", eng, round))
	defer os.RemoveAll(dir)
	req := b.prep
	req.Engine, req.Scenario, req.Dir, req.Input = eng, b.scenario, dir, input
	req.Output = filepath.Join(dir, "floor.parquet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, err
	}
	spec, err := json.Marshal(req)
	if err != nil {
		return m, err
	}
	floor := eng == "pqarrow" || eng == "pyarrow"
	if !floor {
		if out, err := exec.Command(os.Args[0], "-prepare", string(spec)).CombinedOutput(); err != nil {
			return m, fmt.Errorf("prepare: %v: %s", err, out)
		}
	}
	var cmd *exec.Cmd
	switch eng {
	case "icerun", "icerun-mor", "raw", "pqarrow":
		cmd = exec.Command(os.Args[0], "-run", string(spec))
	default:
		if python == "" {
			return m, fmt.Errorf("%s needs ICERUN_PYTHON: eval \"$(scripts/engines)\"", eng)
		}
		cmd = exec.Command(python, script, string(spec))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, peak, err := runTree(cmd)
	if err != nil {
		return m, fmt.Errorf("%v: %s", err, tail(stderr.String(), 20000))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m.outcome); err != nil {
		return m, fmt.Errorf("output %q: %v", out, err)
	}
	m.peakMB = peak
	return m, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// printBlock prints one line per engine of b.
func printBlock(b block, res [][]measured) {
	base := slices.Index(b.engines, "icerun")
	var baseNote string
	if base < 0 { // a block of peers only: ratios to its last engine
		base = len(b.engines) - 1
		baseNote = "vs " + b.engines[base]
	}
	for i, eng := range b.engines {
		var wall, cpu, peak, ratio, startup, laps []float64
		for j, m := range res[i] {
			wall, cpu, peak = append(wall, m.Wall), append(cpu, m.CPU), append(peak, m.peakMB)
			if base >= 0 {
				ratio = append(ratio, m.Wall/res[base][j].Wall)
			}
			if m.Startup > 0 {
				startup = append(startup, m.Startup)
			}
			if m.First10 > 0 {
				laps = append(laps, m.Last10/m.First10)
			}
		}
		var notes []string
		if baseNote != "" {
			notes = append(notes, baseNote)
		}
		if len(startup) > 0 {
			notes = append(notes, fmt.Sprintf("JVM+session %.1f s (%.1f-%.1f)", median(startup), slices.Min(startup), slices.Max(startup)))
		}
		if len(laps) > 0 {
			notes = append(notes, fmt.Sprintf("last10/first10 %.2fx (%.2f-%.2f)", median(laps), slices.Min(laps), slices.Max(laps)))
		}
		vs := "-"
		if len(ratio) > 0 {
			vs = fmt.Sprintf("%.2fx", median(ratio))
		}
		fmt.Printf("%-48s %-10s %5.2f (%.2f-%.2f) %7.2f %4.0f (%.0f-%.0f) %8s  %s\n", b.name, eng,
			median(wall), slices.Min(wall), slices.Max(wall), median(cpu),
			median(peak), slices.Min(peak), slices.Max(peak), vs, strings.Join(notes, "; "))
	}
}
