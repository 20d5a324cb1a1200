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
// whole process tree: the sum of the peak resident sets (VmHWM) of the
// child and every descendant seen (pyspark's JVM is a child of the python
// process), polled every 20 ms from /proc. A sum of peaks never misses a
// short spike; it can exceed the tree's peak if its processes peak at
// different times. (The kernel's maxrss of the child is no use: a child
// forked from this process starts with this process's high-water mark.)
func runTree(cmd *exec.Cmd) (stdout []byte, peakMB float64, err error) {
	var buf strings.Builder
	cmd.Stdout = &buf
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan struct{})
	peak := make(chan float64)
	go func() {
		hwm := map[int]int64{} // kB by pid
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			treeHWM(cmd.Process.Pid, hwm)
			select {
			case <-done:
				var kb int64
				for _, v := range hwm {
					kb += v
				}
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

// treeHWM records in hwm the VmHWM (kB) of pid and its descendants now.
func treeHWM(pid int, hwm map[int]int64) {
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if kb := statusKB("/proc/"+strconv.Itoa(p)+"/status", "VmHWM:"); kb > hwm[p] {
			hwm[p] = kb
		}
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
}

// statusKB is the kB figure of field in a /proc status file, 0 if absent.
func statusKB(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
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
