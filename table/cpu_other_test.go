//go:build !unix

package table_test

import "time"

// processCPU is not measured on this system: the cpu-ns/row metrics are 0.
func processCPU() time.Duration { return 0 }
