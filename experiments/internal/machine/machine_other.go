//go:build !linux && !(js && wasm)

package machine

import "time"

// Outside Linux there is no /proc: RSS figures are unknown (-1), the
// results say so with rss_bytes 0, and only bytes_allocated and the Go heap
// are reported. The browser build (js/wasm) has its own twin,
// machine_js.go, where the tab's WebAssembly memory stands in for RSS.

func CurrentRSS() int64              { return -1 }
func StatusMemory() (rss, hwm int64) { return -1, -1 }
func ResetPeak() bool                { return false }

const MemoryMeasurable = false

func AvailableMemory() (int64, string) { return -1, "" }

// KernelCPU: the kernel's CPU time for this process is unknown here (-1).
func KernelCPU() time.Duration { return -1 }
