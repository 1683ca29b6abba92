// tsl::hopscotch_map (Tessil): open addressing over a power-of-two array of
// buckets, each a cell and a 62-bit neighbourhood bitmap; an element sits
// within 62 buckets of its home, else in an overflow list; grows at 0.9 full.
#include <tsl/hopscotch_map.h>

#include "measure.h"

namespace refs {

template <class K, class V>
struct Hopscotch {
  using Alloc = counting_allocator<std::pair<K, V>>;
  using Map = tsl::hopscotch_map<K, V, std::hash<K>, std::equal_to<K>, Alloc>;
  // The bucket type of the map above (NeighborhoodSize 62, StoreHash false).
  using Bucket = tsl::detail_hopscotch_hash::hopscotch_bucket<std::pair<K, V>, 62, false>;
  Map m;
  bool insert(const K& k, const V& v) { return m.try_emplace(k, v).second; }
  const V* find(const K& k) const {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }
  template <class F>
  void each(F&& f) const {
    for (const auto& p : m) f(p.first, p.second);
  }
  std::size_t size() const { return m.size(); }
  Geometry geometry() const {
    Geometry g;
    g.bucket_count = static_cast<int64_t>(m.bucket_count());
    g.max_load_factor = m.max_load_factor();
    g.slot_bytes = sizeof(Bucket);
    g.bytes_allocated = counted_bytes();
    return g;
  }
};

static int run(const Job& job);
extern const MapInfo kHopscotch = {"hopscotch", "tsl::hopscotch_map", "tsl-hopscotch-map", true, run};
static int run(const Job& job) { return measure_types<Hopscotch>(job, kHopscotch); }

}  // namespace refs
