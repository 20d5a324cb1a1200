//go:build unix

package sink_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time, user and system, that the process has used
// so far: on a shared machine it varies less than the elapsed time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
