// One measured run of one reference map, the lab's way (see README.md):
//
//   buffers allocated and touched, malloc trimmed   nothing of setup in the baseline
//   baseline            VmRSS; VmHWM reset to VmRSS; malloc's bytes in use
//   load                frames from stdin, each row inserted (first one wins);
//                       every 100 ms a timeline point and a progress line
//   after the load      rss_bytes = VmRSS - baseline (no trim, no collection:
//                       what a program holding the map has), the geometry
//   verify              recount the table and its checksum against the inserts
//   read                chunks of 4096 keys prepared untimed (hits from stdin in
//                       the lab's order, absent keys drawn here), then looked
//                       up in a timed loop: read_seconds is the lookups alone
//   peak                peak_rss_bytes = VmHWM - baseline, over load and read
//
// The worker keeps no list of keys: what it holds besides the map is one
// frame of rows and one chunk of keys, allocated before the baseline.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "worker.h"

namespace refs {

// MapAdapter is what measure() needs of a map with the standard interface:
// insert (the first value of a key wins, as in a ClickHouse dictionary),
// find, each and size, plus the geometry a map file adds. The geometry of a
// map whose allocator counts (counting_allocator) is counted_geometry.
template <class M>
struct MapAdapter {
  using K = typename M::key_type;
  using V = typename M::mapped_type;
  M m;
  bool insert(const K& k, const V& v) { return m.insert(typename M::value_type(k, v)).second; }
  const V* find(const K& k) const {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }
  template <class F>
  void each(F&& f) const {
    for (const auto& p : m) f(p.first, p.second);
  }
  std::size_t size() const { return m.size(); }
  void reserve(std::size_t n) { m.reserve(n); }
  Geometry counted_geometry(int64_t slot_bytes, double max_load_factor) const {
    Geometry g;
    g.bucket_count = static_cast<int64_t>(m.bucket_count());
    g.max_load_factor = max_load_factor;
    g.slot_bytes = slot_bytes;
    g.bytes_allocated = counted_bytes();
    return g;
  }
};

// splitmix64 draws the read phase's absent keys and interleaving; the lab's
// Go read phase uses its own generator, so the absent keys differ but are
// drawn the same way (uniform over the key's bits, redrawn while present).
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // below returns a uniform number in [0, n), n > 0 (Lemire's multiply).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
};

// value_sink_ keeps the read phase's values alive: a lookup whose value is
// never used could be optimised away.
inline volatile uint64_t value_sink_ = 0;

// short_number writes a library's float setting (0.8f) as it was written,
// not as its double value (0.800000011920929).
inline std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct TimePoint {
  double seconds;
  int64_t rows;
  int64_t rss;
};

inline std::string progress_line(const char* layout, const char* phase, int64_t rows, int64_t total,
                                 double seconds, int64_t rss) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"progress\":{\"layout\":\"%s\",\"phase\":\"%s\",\"rows\":%" PRId64
                ",\"total_rows\":%" PRId64 ",\"seconds\":%s,\"rss_bytes\":%" PRId64 "}}",
                layout, phase, rows, total, json_number(seconds).c_str(), rss);
  return buf;
}

template <template <class, class> class A, class K, class V>
int measure(const Job& job, const MapInfo& info) {
  const char* layout = info.name;
  // Setup: one frame of rows and one chunk of keys, touched now so that
  // their pages are in the baseline.
  std::vector<K> keys(kFrameRows);
  std::vector<V> values(kFrameRows);
  std::vector<K> chunk(kReadChunk);
  std::vector<TimePoint> timeline(4096);  // room for 400 s of samples, touched now
  timeline.clear();
  trim_malloc();

  const int64_t rss0 = current_rss();
  const bool reset = reset_peak();
  const int64_t hwm0 = status_hwm();
  const int64_t heap0 = malloc_in_use();
  auto rel = [&](int64_t rss) { return rss < 0 || rss0 < 0 ? int64_t{0} : rss - rss0; };
  int64_t sampled_peak = rss0;

  const double t0 = now_seconds();
  const double kernel0 = kernel_seconds();
  A<K, V> map;
  // The lab's --preallocate: room for every row before the first insert,
  // inside the load's time as packlab's own reservation is.
  if (job.reserve && job.total_rows > 0) map.reserve(static_cast<std::size_t>(job.total_rows));
  int64_t rows = 0, duplicates = 0;
  uint64_t kept_sum = 0;
  double busy = 0, wait = 0, last_sample = 0;
  timeline.push_back({0, 0, 0});
  for (;;) {
    const double w0 = now_seconds();
    uint32_t n = 0;
    read_exact(&n, sizeof n, "a load frame");
    if (n > kFrameRows) {
      return fail("protocol: a load frame of " + std::to_string(n) + " rows (allowed: up to " +
                  std::to_string(kFrameRows) + ")");
    }
    if (n == 0) {
      wait += now_seconds() - w0;
      break;
    }
    read_exact(keys.data(), n * sizeof(K), "a load frame's keys");
    read_exact(values.data(), n * sizeof(V), "a load frame's values");
    const double b0 = now_seconds();
    wait += b0 - w0;
    for (uint32_t i = 0; i < n; ++i) {
      if (map.insert(keys[i], values[i])) {
        kept_sum += pair_checksum(keys[i], values[i]);
      } else {
        ++duplicates;
      }
    }
    const double b1 = now_seconds();
    busy += b1 - b0;
    rows += n;
    if (b1 - t0 - last_sample >= 0.1) {
      last_sample = b1 - t0;
      const int64_t rss = current_rss();
      sampled_peak = std::max(sampled_peak, rss);
      timeline.push_back({last_sample, rows, rel(rss)});
      write_line(progress_line(layout, "load", rows, job.total_rows, last_sample, rel(rss)));
    }
  }
  const double load_seconds = now_seconds() - t0;
  const double kernel1 = kernel_seconds();
  const double load_kernel_seconds = kernel0 >= 0 && kernel1 >= kernel0 ? kernel1 - kernel0 : 0;

  // Memory after the load, as a program holding the map has it.
  const int64_t rss1 = current_rss();
  const int64_t heap1 = malloc_in_use();
  sampled_peak = std::max(sampled_peak, rss1);
  if (timeline.back().rows != rows) timeline.push_back({load_seconds, rows, rel(rss1)});
  const Geometry g = map.geometry();
  const int64_t size = static_cast<int64_t>(map.size());

  // Verify: the table holds what was inserted, no more, no less.
  int64_t count = 0;
  uint64_t table_sum = 0;
  map.each([&](const K& k, const V& v) {
    ++count;
    table_sum += pair_checksum(k, v);
  });
  if (count != size || size != rows - duplicates || table_sum != kept_sum) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "%s: the table holds %" PRId64 " pairs (size() %" PRId64 ", checksum %016" PRIx64
                  ") but %" PRId64 " were inserted (checksum %016" PRIx64 ")",
                  layout, count, size, table_sum, rows - duplicates, kept_sum);
    return fail(buf);
  }

  // Read phase.
  int64_t lookups = 0, found = 0;
  double read_seconds = 0;
  if (!job.no_read) {
    write_line(progress_line(layout, "read", rows, job.total_rows, load_seconds, rel(current_rss())));
    uint64_t head[2];
    read_exact(head, sizeof head, "the read phase's counts");
    uint64_t hits_left = head[0], misses_left = head[1];
    Rng rng{job.seed ^ 0x5eed0f4eadULL};
    std::vector<K> absent;  // a 1- or 2-byte key's absent values, as core lists them
    if constexpr (sizeof(K) <= 2) {
      if (misses_left > 0) {
        const uint64_t domain = uint64_t{1} << (8 * sizeof(K));
        for (uint64_t x = 0; x < domain; ++x) {
          if (!map.find(from_words<K>(x, 0))) absent.push_back(from_words<K>(x, 0));
        }
        if (absent.empty()) {
          return fail("read: every one of the " + std::to_string(domain) + " values of a " +
                      std::to_string(sizeof(K)) + "-byte key is loaded, so no key is absent");
        }
      }
    }
    uint32_t frame_n = 0, frame_i = 0;
    bool hits_done = false;
    auto next_hit = [&](K& out) -> bool {
      if (frame_i == frame_n) {
        read_exact(&frame_n, sizeof frame_n, "a read frame");
        if (frame_n > kFrameRows) return false;
        if (frame_n == 0) {
          hits_done = true;
          return false;
        }
        read_exact(keys.data(), frame_n * sizeof(K), "a read frame's keys");
        frame_i = 0;
      }
      out = keys[frame_i++];
      return true;
    };
    uint64_t value_sink = 0;
    while (hits_left + misses_left > 0) {
      size_t n = 0;
      for (; n < kReadChunk && hits_left + misses_left > 0; ++n) {
        if (misses_left > 0 && rng.below(hits_left + misses_left) < misses_left) {
          if (!absent.empty()) {
            chunk[n] = absent[rng.below(absent.size())];
          } else {
            int tries = 0;
            do {
              if (++tries > 10000) {
                return fail("read: 10000 random keys in a row were all loaded; the key type is too full to draw absent keys");
              }
              chunk[n] = from_words<K>(rng.next(), rng.next());
            } while (map.find(chunk[n]));
          }
          --misses_left;
        } else {
          if (!next_hit(chunk[n])) {
            return fail("protocol: the lab sent fewer hit keys than it announced, or a frame too large");
          }
          --hits_left;
        }
      }
      const double r0 = now_seconds();
      int64_t f = 0;
      for (size_t i = 0; i < n; ++i) {
        if (const V* v = map.find(chunk[i])) {
          ++f;
          uint64_t lo, hi;
          words(*v, lo, hi);
          value_sink += lo;
        }
      }
      read_seconds += now_seconds() - r0;
      lookups += static_cast<int64_t>(n);
      found += f;
    }
    K extra;
    if (!hits_done && next_hit(extra)) {
      return fail("protocol: the lab sent more hit keys than it announced");
    }
    value_sink_ = value_sink;
  }
  const int64_t hwm1 = status_hwm();
  sampled_peak = std::max(sampled_peak, current_rss());
  // As experiments.peakOf: VmHWM, unless the kernel refused the reset and the
  // run never rose above the earlier high-water mark.
  int64_t peak = 0;
  if (rss0 >= 0) {
    if (hwm1 > hwm0 || (reset && hwm0 <= rss0 + (1 << 20))) {
      peak = std::max(hwm1, sampled_peak) - rss0;
    } else {
      peak = sampled_peak - rss0;
    }
  }

  // The breakdown, in packlab's words.
  const int64_t pair = static_cast<int64_t>(sizeof(K) + sizeof(V));
  const int64_t cell = static_cast<int64_t>(sizeof(std::pair<K, V>));
  const int64_t payload = size * pair;
  const int64_t padding = size * (cell - pair);
  const int64_t empty = g.empty_cells ? std::max<int64_t>(g.bucket_count - size, 0) * cell : 0;
  const int64_t metadata = g.bytes_allocated - payload - padding - empty;

  std::string out = "{\"result\":{";
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "\"layout\":\"%s\",\"reference\":%s,\"rows\":%" PRId64 ",\"element_count\":%" PRId64
      ",\"duplicates\":%" PRId64 ",\"bucket_count\":%" PRId64 ",\"load_factor\":%s,\"max_load_factor\":%s"
      ",\"slot_bytes\":%" PRId64 ",\"bytes_allocated\":%" PRId64 ",\"payload_bytes\":%" PRId64
      ",\"padding_bytes\":%" PRId64 ",\"empty_bytes\":%" PRId64 ",\"metadata_bytes\":%" PRId64
      ",\"estimated\":%s,\"heap_bytes\":%" PRId64 ",\"rss_bytes\":%" PRId64 ",\"peak_rss_bytes\":%" PRId64
      ",\"load_seconds\":%s,\"load_kernel_seconds\":%s,\"load_rows_per_second\":%s,\"read_seconds\":%s,\"read_rows_per_second\":%s"
      ",\"found_rate\":%s,\"checksum\":\"%016" PRIx64 "\",\"repeats\":1,\"isolated\":true,\"runtime\":\"native\""
      ",\"workers\":[{\"shard\":0,\"rows\":%" PRId64 ",\"busy_seconds\":%s,\"wait_seconds\":%s,\"rows_per_second\":%s}]",
      layout, json_string(std::string(info.map) + " (" + info.library + ")").c_str(), rows, size, duplicates,
      g.bucket_count, json_number(g.bucket_count > 0 ? double(size) / double(g.bucket_count) : 0).c_str(),
      short_number(g.max_load_factor).c_str(), g.slot_bytes, g.bytes_allocated, payload, padding, empty, metadata,
      g.estimated ? "true" : "false", std::max<int64_t>(heap1 - heap0, 0), std::max<int64_t>(rel(rss1), 0),
      std::max<int64_t>(peak, 0), json_number(load_seconds).c_str(), json_number(load_kernel_seconds).c_str(),
      json_number(load_seconds > 0 ? double(rows) / load_seconds : 0).c_str(), json_number(read_seconds).c_str(),
      json_number(read_seconds > 0 ? double(lookups) / read_seconds : 0).c_str(),
      json_number(lookups > 0 ? double(found) / double(lookups) : 0).c_str(), kept_sum, rows,
      json_number(busy).c_str(), json_number(wait).c_str(), json_number(busy > 0 ? double(rows) / busy : 0).c_str());
  out += buf;
  out += ",\"timeline\":[";
  for (size_t i = 0; i < timeline.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s{\"seconds\":%s,\"rows\":%" PRId64 ",\"rss_bytes\":%" PRId64 "}", i ? "," : "",
                  json_number(timeline[i].seconds).c_str(), timeline[i].rows, timeline[i].rss);
    out += buf;
  }
  out += "]}}";
  write_line(out);
  return 0;
}

// measure_types picks the instantiation for the job's key and value sizes:
// 5 x 5 cover every type pair the lab offers, since maps only see bits.
template <template <class, class> class A, class K>
int measure_value(const Job& job, const MapInfo& info) {
  switch (job.value_bytes) {
    case 1: return measure<A, K, uint8_t>(job, info);
    case 2: return measure<A, K, uint16_t>(job, info);
    case 4: return measure<A, K, uint32_t>(job, info);
    case 8: return measure<A, K, uint64_t>(job, info);
    case 16: return measure<A, K, U128>(job, info);
  }
  return fail("value_bytes " + std::to_string(job.value_bytes) + ": no such value size (allowed: 1, 2, 4, 8, 16)");
}

template <template <class, class> class A>
int measure_types(const Job& job, const MapInfo& info) {
  switch (job.key_bytes) {
    case 1: return measure_value<A, uint8_t>(job, info);
    case 2: return measure_value<A, uint16_t>(job, info);
    case 4: return measure_value<A, uint32_t>(job, info);
    case 8: return measure_value<A, uint64_t>(job, info);
    case 16: return measure_value<A, U128>(job, info);
  }
  return fail("key_bytes " + std::to_string(job.key_bytes) + ": no such key size (allowed: 1, 2, 4, 8, 16)");
}

}  // namespace refs
