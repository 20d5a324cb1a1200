package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runTree runs cmd and returns its stdout and the peak RSS in MB of its
// whole process tree: the sum of the resident sets of the child and all
// its descendants (pyspark's JVM is a child of the python process),
// polled every 20 ms from /proc, and at least the maxrss the kernel kept
// for the child and the descendants it waited for.
func runTree(cmd *exec.Cmd) (stdout []byte, peakMB float64, err error) {
	var buf strings.Builder
	cmd.Stdout = &buf
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	done := make(chan struct{})
	peak := make(chan float64)
	go func() {
		var max float64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if mb := treeRSSMB(cmd.Process.Pid); mb > max {
				max = mb
			}
			select {
			case <-done:
				peak <- max
				return
			case <-t.C:
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	peakMB = <-peak
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && float64(ru.Maxrss)/1024 > peakMB {
		peakMB = float64(ru.Maxrss) / 1024
	}
	return []byte(buf.String()), peakMB, err
}

// treeRSSMB is the summed RSS in MB of pid and its descendants now.
func treeRSSMB(pid int) float64 {
	var pages int64
	todo := []int{pid}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/statm"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 1 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				pages += n
			}
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
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
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
