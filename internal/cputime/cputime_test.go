package cputime

import (
	"runtime"
	"testing"
)

func TestProcessGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured here")
	}
	before := Process()
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	if Process() <= before {
		t.Fatalf("CPU time did not grow over a busy loop (%d)", x)
	}
}
