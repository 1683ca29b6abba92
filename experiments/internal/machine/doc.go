// Package machine reads what the operating system says of this process
// and this machine: the resident set size now and at its peak
// (CurrentRSS, StatusMemory, ResetPeak; around a load Baseline, PeakOf,
// PeakSampler), the kernel's CPU time (KernelCPU, KernelSeconds)
// and the memory a run may still take (AvailableMemory: MemAvailable, the
// tightest cgroup limit above this process, RLIMIT_AS). Linux has /proc; the
// browser build reads its WebAssembly memory instead (machine_js.go);
// elsewhere the figures are unknown, -1 (machine_other.go). Only the engine
// and its rooms ask it.
package machine

// WasmMemoryLimit is the most a wasm32 linear memory can hold: 2^32 bytes.
// The memory guard's "available" in the browser is this minus what the
// runtime holds now, so a run's row cap follows from core.Predict's peak.
const WasmMemoryLimit = 1 << 32
