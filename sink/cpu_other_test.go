//go:build !unix

package sink_test

import "time"

// processCPU is not measured on this system: the CPU ratios are NaN.
func processCPU() time.Duration { return 0 }
