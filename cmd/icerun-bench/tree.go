package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runTree runs cmd and returns its stdout and the peak RSS in MB of its
// whole process tree (pyspark's JVM is a child of the python process),
// polled every 20 ms from /proc: the largest sum of the resident sets
// (VmRSS) of the processes alive at one poll, or the largest peak resident
// set (VmHWM) of a single process if that is larger, which catches a
// process's spike between polls. A sum of every process's peak would not
// do: Spark starts short-lived workers one after another, and a 400-step
// loop summed to 150 GB. (The kernel's maxrss of the child is no use: a
// child forked from this process starts with this process's high-water
// mark.)
func runTree(cmd *exec.Cmd) (stdout []byte, peakMB float64, err error) {
	var buf strings.Builder
	cmd.Stdout = &buf
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan struct{})
	peak := make(chan float64)
	go func() {
		var kb int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			kb = max(kb, treePeakKB(cmd.Process.Pid))
			select {
			case <-done:
				peak <- float64(kb) / 1024
				return
			case <-t.C:
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	return []byte(buf.String()), <-peak, err
}

// treePeakKB is the resident set of pid and its descendants now (kB), or
// the largest peak resident set of one of them if that is larger.
func treePeakKB(pid int) int64 {
	var sum, hwm int64
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		kb := statusKB("/proc/"+strconv.Itoa(p)+"/status", "VmRSS:", "VmHWM:")
		sum += kb[0]
		hwm = max(hwm, kb[1])
		// A child is listed under the thread that forked it.
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(p) + "/task/*/children")
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					todo = append(todo, n)
				}
			}
		}
	}
	return max(sum, hwm)
}

// statusKB is the kB figures of fields in a /proc status file, read
// once; 0 for a field that is absent.
func statusKB(path string, fields ...string) []int64 {
	kb := make([]int64, len(fields))
	b, err := os.ReadFile(path)
	if err != nil {
		return kb
	}
	for _, line := range strings.Split(string(b), "\n") {
		for i, f := range fields {
			if rest, ok := strings.CutPrefix(line, f); ok {
				kb[i], _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			}
		}
	}
	return kb
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
