package machine

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// The peak of a run: what the engine reads around a load to give its
// resident memory and peak above a baseline, and the Go heap's share.

// Baseline is the process's memory before a load: the Go heap in use, RSS,
// and VmHWM just reset (or what it held if the kernel refused). The
// FreeOSMemory first is a full collection, then every free page returned to
// the operating system.
func Baseline() (heap, rss, hwm int64) {
	debug.FreeOSMemory()
	heap = HeapInUse()
	rss, _ = StatusMemory()
	ResetPeak()
	_, hwm = StatusMemory()
	return heap, rss, hwm
}

// PeakOf is the run's peak resident memory above the Baseline rss0. VmHWM
// was reset to VmRSS before the run (hwm0 is what it read after the reset);
// if the kernel refused the reset, hwm0 is the process's earlier high-water
// mark, and a run that never rose above it leaves VmHWM unchanged. In that
// case VmHWM says nothing about this run, and the peak falls back to the
// highest RSS the peak sampler saw while polling every 10 ms (which can miss a
// spike shorter than that).
func PeakOf(rss0, hwm0, hwm1, sampled int64) int64 {
	if rss0 < 0 {
		return 0
	}
	if hwm1 > hwm0 || hwm0 <= rss0+(1<<20) {
		return max(hwm1, sampled) - rss0
	}
	return sampled - rss0
}

// PeakSampler reads RSS every 10 ms while a load runs: the fallback for
// peak_rss_bytes where the kernel's high-water mark cannot be reset (see
// PeakOf). It reads; it never collects or returns memory.
type PeakSampler struct {
	quit chan struct{}
	done chan struct{}
	peak atomic.Int64 // highest RSS polled
}

const peakPoll = 10 * time.Millisecond

func StartPeakSampler(rss0 int64) *PeakSampler {
	r := &PeakSampler{quit: make(chan struct{}), done: make(chan struct{})}
	r.peak.Store(rss0)
	if !MemoryMeasurable || rss0 < 0 {
		close(r.done)
		return r
	}
	go func() {
		defer close(r.done)
		t := time.NewTicker(peakPoll)
		defer t.Stop()
		for {
			select {
			case <-r.quit:
				return
			case <-t.C:
			}
			if rss := CurrentRSS(); rss > r.peak.Load() {
				r.peak.Store(rss)
			}
		}
	}()
	return r
}

// Stop ends the polling and returns the highest RSS seen.
func (r *PeakSampler) Stop() int64 {
	select {
	case <-r.done:
	default:
		close(r.quit)
		<-r.done
	}
	return r.peak.Load()
}

// HeapInUse is the Go heap's bytes in objects right now, live or not yet
// collected: what the runtime holds for the program's Go objects, with no
// collection forced to find out.
func HeapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// KernelSeconds is the kernel CPU time between two readings of KernelCPU, 0
// when either is unknown.
func KernelSeconds(before, after time.Duration) float64 {
	if before < 0 || after < before {
		return 0
	}
	return (after - before).Seconds()
}
