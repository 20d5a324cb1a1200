package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// startHeapProfile keeps in $ICERUN_BENCH_HEAPPROFILE the heap profile
// taken when the step's live heap was largest (sampled every 20 ms, just
// after a collection's mark), so that a peak-memory figure can be taken
// apart; stop ends the sampling. Sampling the whole of each allocation
// (MemProfileRate 1) slows the step: its times are not figures.
func startHeapProfile() (stop func()) {
	path := os.Getenv("ICERUN_BENCH_HEAPPROFILE")
	if path == "" {
		return func() {}
	}
	runtime.MemProfileRate = 4096
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	go func() {
		defer close(finished)
		var peak uint64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > peak {
				peak = live
				if f, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}
