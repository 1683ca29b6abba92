//go:build js && wasm

package machine

import (
	"runtime/metrics"
	"time"
)

// The browser build's twin of machine_linux.go and machine_other.go (whose
// owner meant js/wasm to land in machine_other.go's "unknown"; this file
// gives the browser figures of its own instead, the issue's "RSS replaced by
// the wasm memory").
//
// A tab has no RSS: the run lives in the page's WebAssembly memory, one
// linear memory of at most 4 GiB (wasm32: Go's GOARCH=wasm has 64-bit ints
// but 32-bit addresses) that grows and never shrinks. What stands in for RSS
// is the part of that memory the Go runtime holds now: every byte it has
// mapped (runtime/metrics /memory/classes/total:bytes) minus the heap it has
// released to its free pages (/memory/classes/heap/released:bytes), which
// the next allocation reuses before the memory grows again. It rises and
// falls as RSS does (debug.FreeOSMemory releases), so a run's figures are
// its own even after an earlier run in the same tab grew the memory; the
// browser face labels it "wasm memory". The memory's own size
// (WebAssembly.Memory.buffer.byteLength) is its high-water mark.

var wasmSamples = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// wasmInUse is the wasm memory the Go runtime holds: mapped minus released.
func wasmInUse() int64 {
	s := make([]metrics.Sample, len(wasmSamples))
	copy(s, wasmSamples)
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

func CurrentRSS() int64 { return wasmInUse() }

// StatusMemory has no high-water mark to give: the peak sampler's samples
// (every 10 ms, when the single thread lets it run) make the peak.
func StatusMemory() (rss, hwm int64) { return wasmInUse(), -1 }

func ResetPeak() bool { return false }

const MemoryMeasurable = true

// AvailableMemory is the room left in the wasm32 address space.
func AvailableMemory() (int64, string) {
	used := wasmInUse()
	if used < 0 {
		return -1, ""
	}
	return max(WasmMemoryLimit-used, 0), "the 4 GiB of a wasm32 memory"
}

// KernelCPU: the kernel's CPU time for this process is unknown here (-1).
func KernelCPU() time.Duration { return -1 }
