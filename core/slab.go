package core

import (
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Slabs: the memory a table owns.
//
// Every table keeps its cells in slabs, blocks of zeroed memory it
// allocates itself and releases the moment a growth has moved its elements
// out, or when it is closed. Where the operating system allows (Linux:
// slab_linux.go, macOS: slab_darwin.go) a slab is an anonymous mapping
// outside the Go heap, so the collector neither scans it nor keeps it: a
// table's resident memory is what its Stats say, at every moment, in any
// program, with no garbage collection involved. Elsewhere (js/wasm:
// slab_heap.go) a slab is a Go allocation, released to the collector.
//
//	table header (Go heap, tens of bytes)      slab (mmap, Stats' bytes)
//	+------------------------------+           +---------------------------+
//	| cells/base, mask, size, ...  |---------->| cell | cell | cell | ...  |
//	| owner *slabOwner ------------|--+        +---------------------------+
//	+------------------------------+  |
//	                                  +--> owner: every slab the table holds;
//	                                       runtime.AddCleanup frees them if the
//	                                       table is dropped without Close
//
// A slab never holds a Go pointer: cells are keys and values (Bits), and
// sparse groups address their vectors by chunk and offset, not by pointer.

// SlabError is a failed slab allocation: the table that asked, and how much.
// A growth that cannot get its new slab leaves the table as it was (the
// insert that needed the room is not done) and panics with a *SlabError;
// Load returns it as the load's error.
type SlabError struct {
	Layout Layout
	Bytes  uint64 // the slab asked for
	Err    error  // what the operating system said
}

func (e *SlabError) Error() string {
	return fmt.Sprintf("%s: cannot allocate a slab of %d bytes (%.1f MiB): %v", e.Layout, e.Bytes, float64(e.Bytes)/(1<<20), e.Err)
}

func (e *SlabError) Unwrap() error { return e.Err }

// slabLive and slabAllocs count the bytes held in slabs by every table of
// the process, and the slabs allocated so far. SlabBytes reads the first.
var slabLive, slabAllocs atomic.Int64

// SlabBytes is the number of bytes all tables of this process hold in
// slabs right now: the sum of their Stats' slab parts. A program (or the
// lab) can compare it with its RSS to see that nothing else is held.
func SlabBytes() int64 { return slabLive.Load() }

// slabAllocHook, when set (tests only), is asked before every slab
// allocation and may refuse it with an error, as the OS would.
var slabAllocHook func(bytes uintptr) error

// newSlab returns `bytes` zeroed bytes owned by the caller until freeSlab.
// layout names the table in the error.
func newSlab(layout Layout, bytes uintptr) ([]byte, error) {
	if bytes == 0 {
		return nil, nil
	}
	if h := slabAllocHook; h != nil {
		if err := h(bytes); err != nil {
			return nil, &SlabError{Layout: layout, Bytes: uint64(bytes), Err: err}
		}
	}
	b, err := osAlloc(bytes)
	if err != nil {
		return nil, &SlabError{Layout: layout, Bytes: uint64(bytes), Err: err}
	}
	slabLive.Add(int64(bytes))
	slabAllocs.Add(1)
	return b, nil
}

// mustSlab is newSlab for a growth: it panics with the *SlabError.
func mustSlab(layout Layout, bytes uintptr) []byte {
	b, err := newSlab(layout, bytes)
	if err != nil {
		panic(err)
	}
	return b
}

// slabHuge is whether new slabs from hugeSlab bytes ask for transparent
// huge pages where the OS has them (Linux): on unless PACKLAB_HUGEPAGES=off
// is in the environment, and SetHugePages changes it.
var slabHuge atomic.Bool

func init() { slabHuge.Store(os.Getenv("PACKLAB_HUGEPAGES") != "off") }

// HugePages reports whether slabs allocated now ask the kernel for
// transparent huge pages: large slabs do on Linux unless turned off; there
// are none elsewhere. Reads over a table of hundreds of MB run 30-75 %
// faster on them; on a VM that returns free memory to its host a fresh huge
// page can be slow to fault in (README, "Performance"), so a program that
// loads once and reads little may turn them off.
func HugePages() bool { return slabsAskHugePages && slabHuge.Load() }

// HugePagesSupported reports whether this platform's slabs can have
// transparent huge pages at all (Linux).
const HugePagesSupported = slabsAskHugePages

// SetHugePages turns the huge-page advice on or off for the slabs allocated
// (or grown) from now on, in every table of the process. Slabs already
// made keep the pages they have.
func SetHugePages(on bool) { slabHuge.Store(on) }

// SlabsGrowInPlace reports whether a growing slab keeps its pages on this
// platform (Linux: mremap), so that a table's growth holds only the new
// slab at its peak, not the old one beside it (core.Predict knows it).
const SlabsGrowInPlace = slabsGrowInPlace

// growSlab returns b grown to `bytes` zero-extended, as realloc does: in
// place where the OS can remap pages (slabsGrowInPlace), else by a copy into
// a new slab and the release of b. Where it fails, b is untouched and the
// error is a *SlabError; where it succeeds, b must not be touched again.
func growSlab(layout Layout, b []byte, bytes uintptr) ([]byte, error) {
	if h := slabAllocHook; h != nil {
		if err := h(bytes); err != nil {
			return nil, &SlabError{Layout: layout, Bytes: uint64(bytes), Err: err}
		}
	}
	g, err := osGrow(b, bytes)
	if err != nil {
		return nil, &SlabError{Layout: layout, Bytes: uint64(bytes), Err: err}
	}
	slabLive.Add(int64(bytes) - int64(len(b)))
	slabAllocs.Add(1)
	return g, nil
}

// growByCopy is osGrow where pages cannot be remapped: a new slab, the old
// contents copied in, the old slab released.
func growByCopy(b []byte, bytes uintptr) ([]byte, error) {
	g, err := osAlloc(bytes)
	if err != nil {
		return nil, err
	}
	copy(g, b)
	osFree(b)
	return g, nil
}

// freeSlab releases a slab from newSlab; nothing may touch it afterwards.
func freeSlab(b []byte) {
	if len(b) == 0 {
		return
	}
	slabLive.Add(-int64(len(b)))
	osFree(b)
}

// slabOwner holds every slab of one table, so that the table can be
// released by Close, or by the runtime after the table becomes unreachable.
// It lives apart from the table header because a cleanup must not reference
// the object it cleans up after.
type slabOwner struct {
	slabs  [][]byte // every slab the table holds now
	layout Layout   // the table's, for errors and panics
}

// own starts tracking a table: free everything when t becomes unreachable.
func own[T any](t *T, layout Layout) (*slabOwner, runtime.Cleanup) {
	o := &slabOwner{layout: layout}
	return o, runtime.AddCleanup(t, (*slabOwner).free, o)
}

func (o *slabOwner) add(b []byte) {
	if len(b) > 0 {
		o.slabs = append(o.slabs, b)
	}
}

// grow replaces the owner's slab b by b grown to bytes (growSlab), or
// gives the owner a new slab of bytes when b is empty, panicking with the
// *SlabError, b untouched, where it cannot.
func (o *slabOwner) grow(b []byte, bytes uintptr) []byte {
	if len(b) == 0 {
		g := mustSlab(o.layout, bytes)
		o.add(g)
		return g
	}
	i := o.index(b)
	g, err := growSlab(o.layout, b, bytes)
	if err != nil {
		panic(err)
	}
	o.slabs[i] = g
	return g
}

func (o *slabOwner) index(b []byte) int {
	for i, s := range o.slabs {
		if &s[0] == &b[0] {
			return i
		}
	}
	panic("core: a slab the table does not own")
}

// releaseRest releases a slab whose first `released` bytes have already
// been handed back to the OS (compact's growth pass, slabReleaser).
func (o *slabOwner) releaseRest(b []byte, released uintptr) {
	slabLive.Add(int64(released))
	o.release(b)
}

// release frees one slab the owner holds.
func (o *slabOwner) release(b []byte) {
	if len(b) == 0 {
		return
	}
	i := o.index(b)
	o.slabs[i] = o.slabs[len(o.slabs)-1]
	o.slabs = o.slabs[:len(o.slabs)-1]
	freeSlab(b)
}

// free releases every slab; a second call does nothing.
func (o *slabOwner) free() {
	for _, s := range o.slabs {
		freeSlab(s)
	}
	o.slabs = nil
}

// close is what a Close does with the pair own made: it stops c, the
// cleanup that would free o when the table becomes unreachable, and frees
// o's slabs now.
func (o *slabOwner) close(c *runtime.Cleanup) {
	c.Stop()
	o.free()
}

// closedPanic panics for a use of a closed table. It is kept out of line so
// that the probe loops that end in it stay small.
//
//go:noinline
func closedPanic(l Layout) {
	panic(fmt.Sprintf("core: %s table used after Close", l))
}

// slabBytes is cells * cellSize as a slab size, or a panic with a
// *SlabError when the product does not fit in an address.
func slabBytes(layout Layout, cells, cellSize uint64) uintptr {
	hi, lo := bits.Mul64(cells, cellSize)
	if hi != 0 || lo > uint64(^uintptr(0)>>1) {
		panic(&SlabError{Layout: layout, Bytes: lo, Err: fmt.Errorf("%d cells of %d bytes do not fit in an address", cells, cellSize)})
	}
	return uintptr(lo)
}

// bytesOf views a slice of cells as the bytes of its slab.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(s[0]))
}

// viewOf views a slab as n values of T; the slab is page-aligned (mmap) or
// 8-aligned (slab_heap.go), enough for every cell type.
func viewOf[T any](slab []byte, n uint64) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(slab))), n)
}

// closedMemory is what a closed table's probes read: zeros, so that every
// lookup ends at an empty cell and reaches the closed check on its miss
// path, which costs the hit path nothing. Nothing ever writes it.
var closedMemory [8]uint64

// closedView is one zero cell of T over closedMemory.
func closedView[T any]() []T {
	var t T
	if unsafe.Sizeof(t) > unsafe.Sizeof(closedMemory) {
		panic("core: cell larger than closedMemory")
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&closedMemory)), 1)
}

// touchSink keeps touching loads (prefetch_other.go) from being optimised
// away.
var touchSink atomic.Uint32
