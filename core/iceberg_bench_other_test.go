//go:build !linux

package core

import "time"

// threadCPU is 0 where the thread's CPU time is not at hand: the
// benchmarks then report only the wall clock.
func threadCPU() time.Duration { return 0 }
