// packlab-refs: the C++ maps users would pick instead of packlab's layouts,
// measured the way the lab measures its own (see README.md beside this file).
//
// One worker process measures one map, <K,V> by size: the lab (the Go
// parent) writes the job as one JSON line on stdin, then streams the rows
// and the read phase's keys in binary frames; the worker answers on stdout
// in the JSON lines of the Go worker (experiments/worker.go):
//
//   stdin   {"config":{...},"layout":"boost_flat","key_bytes":8,...}\n
//           load frames   [u32 n][n keys][n values] ...  [u32 0]
//           unless no_read: [u64 hits][u64 misses]
//           hit frames    [u32 n][n keys] ...            [u32 0]
//   stdout  {"progress":{...}}   every 100 ms of the load, then "read"
//           {"result":{...}} or {"error":"..."}
//
// Numbers are in the machine's byte order (parent and worker share it); a
// 16-byte key or value is its low word, then its high word, as core.U128.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace refs {

// kProtocol changes whenever the stream or the job line changes; the lab
// refuses a worker built for another one (it asks with --describe).
constexpr int kProtocol = 2;
// kFrameRows is the most rows (or keys) one frame carries: core's block.
constexpr uint32_t kFrameRows = 65536;
// kReadChunk is core/read.go's readChunk: keys prepared, then looked up.
constexpr size_t kReadChunk = 4096;

// U128 holds a 16-byte type (UInt128, Int128, UUID) as packlab stores it:
// two 64-bit words, low first, 8-byte aligned like ClickHouse's wide
// integers (a C++ unsigned __int128 would be 16-byte aligned and change the
// cell). It hashes through each library's own machinery (see the maps).
struct U128 {
  uint64_t lo, hi;
  friend bool operator==(const U128& a, const U128& b) { return a.lo == b.lo && a.hi == b.hi; }
  friend bool operator!=(const U128& a, const U128& b) { return !(a == b); }
};
static_assert(sizeof(U128) == 16 && alignof(U128) == 8, "U128 must match core.U128");

template <class T>
inline void words(const T& t, uint64_t& lo, uint64_t& hi) {
  if constexpr (std::is_same_v<T, U128>) {
    lo = t.lo;
    hi = t.hi;
  } else {
    lo = static_cast<uint64_t>(t);
    hi = 0;
  }
}

template <class T>
inline T from_words(uint64_t lo, uint64_t hi) {
  if constexpr (std::is_same_v<T, U128>) {
    return U128{lo, hi};
  } else {
    (void)hi;
    return static_cast<T>(lo);
  }
}

// int_hash64 is core's intHash64 (Murmur3's fmix64).
inline uint64_t int_hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> ((64 - r) & 63)); }

// pair_checksum is core.PairChecksum: summed over a table's pairs it is the
// same whatever the order, so the lab can prove that this table holds
// exactly the pairs packlab's own layouts hold.
template <class K, class V>
inline uint64_t pair_checksum(const K& k, const V& v) {
  uint64_t klo, khi, vlo, vhi;
  words(k, klo, khi);
  words(v, vlo, vhi);
  return int_hash64(klo ^ int_hash64(khi ^ 0x2545f4914f6cdd1dULL)) ^
         (int_hash64(vlo + rotl64(vhi, 17) + 0x9e3779b97f4a7c15ULL) * 0x9fb21c651e98df25ULL);
}

// counted_bytes is what every counting_allocator holds now: the exact bytes
// a map asked its allocator for. One map lives in a worker.
inline int64_t counted_bytes_ = 0;
inline int64_t counted_bytes() { return counted_bytes_; }

// counting_allocator is std::allocator that counts. It changes nothing the
// map does (the same operator new, the same sizes); the sparsehash maps keep
// their own realloc-based allocator instead, which a wrapper would disable.
template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() noexcept = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    counted_bytes_ += static_cast<int64_t>(n * sizeof(T));
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    counted_bytes_ -= static_cast<int64_t>(n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const counting_allocator<U>&) const noexcept { return false; }
};

// Geometry is what a map tells of itself after the load, in the words of
// packlab's Stats. Cells are the slots a table has room for; a sparse table
// stores only occupied ones (empty_cells false).
struct Geometry {
  int64_t bucket_count = 0;
  double max_load_factor = 0;
  int64_t slot_bytes = 0;       // bytes of one slot as the library lays it out
  int64_t bytes_allocated = 0;  // every byte the structure holds
  bool estimated = false;       // computed from the geometry, not counted
  bool empty_cells = true;      // unoccupied slots hold a cell's bytes each
};

// Job is the lab's request: the first line of stdin.
struct Job {
  std::string layout;
  int key_bytes = 0;
  int value_bytes = 0;
  int64_t total_rows = -1;  // rows the source will give, -1 if unknown
  uint64_t seed = 0;
  bool no_read = false;
  bool reserve = false;     // reserve(total_rows) before the load: the lab's --preallocate
};

// MapInfo is one reference map of this binary.
struct MapInfo {
  const char* name;     // the lab's layout name: boost_flat
  const char* map;      // the C++ type: boost::unordered_flat_map
  std::string library;  // where it comes from: Boost 1.81
  bool exact;           // bytes_allocated counted by the allocator, not estimated
  // run measures the job in this map: measure_types<the map's adapter>.
  int (*run)(const Job&, const MapInfo&);
};

// ---- the workers' plumbing (plumbing.cpp) ----

// worker_main is a worker's main (name is its program's): Ctrl-C, which
// reaches the whole process group, is ignored (the lab decides, and kills
// us); --describe answers what it holds; with no argument it serves the job
// the lab writes on stdin.
int worker_main(int argc, char** argv, const char* name, int (*describe)(), int (*serve)());

// read_job reads the job line from stdin into fields (a flat JSON object;
// nested values are skipped, a string unquoted); it returns "" or why not.
std::string read_job(std::map<std::string, std::string>* fields);
// parse_int reads a whole number in [lo, hi].
bool parse_int(const std::string& text, long long lo, long long hi, long long* out);

// fail writes {"error": msg} and returns the exit code for it.
int fail(const std::string& msg);
// read_exact fills buf from stdin or fails the worker (the lab has gone).
void read_exact(void* buf, size_t n, const char* what);
void write_line(const std::string& s);
// before_gone, when set, runs once before the worker ends because the lab
// has gone (its stream ended or its pipe broke): packlab-ch removes its
// run's folder there.
extern void (*before_gone)();
int64_t current_rss();        // VmRSS in bytes, from /proc/self/statm
int64_t status_hwm();         // VmHWM in bytes, from /proc/self/status
bool reset_peak();            // VmHWM back to VmRSS (clear_refs 5)
int64_t malloc_in_use();      // bytes malloc has handed out (mallinfo2)
void trim_malloc();           // malloc_trim(0): no freed setup memory in the baseline
double now_seconds();         // a steady clock
double kernel_seconds();      // CPU time the kernel spent for this process so far (getrusage)
std::string json_string(const std::string& s);
std::string json_number(double v);

// Measure is the whole measured run of map A<K,V> (measure.h).
template <template <class, class> class A, class K, class V>
int measure(const Job& job, const MapInfo& info);

}  // namespace refs

// std::hash is the default hasher of sparsehash and tsl; for a 16-byte key it
// is the standard one of the low word (libstdc++'s identity for integers)
// with the high word mixed in.
template <>
struct std::hash<refs::U128> {
  std::size_t operator()(const refs::U128& x) const noexcept {
    return std::hash<uint64_t>()(x.lo) ^ (std::hash<uint64_t>()(x.hi) * 0x9e3779b97f4a7c15ULL);
  }
};
