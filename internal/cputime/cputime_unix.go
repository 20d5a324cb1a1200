//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time, user and system, that the process has used so
// far (0 when it cannot be read).
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
