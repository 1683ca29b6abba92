// boost::unordered_flat_map (Boost 1.81+): open addressing in groups of 15
// slots with 16 bytes of metadata each, SIMD-matched; grows at 0.875 full.
#include <boost/container_hash/hash.hpp>
#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/version.hpp>

#include "measure.h"

namespace refs {

// hash_value makes boost::hash, the library's default hasher, take a 16-byte
// key: its own hash_combine over both words.
inline std::size_t hash_value(const U128& x) {
  std::size_t seed = 0;
  boost::hash_combine(seed, x.lo);
  boost::hash_combine(seed, x.hi);
  return seed;
}

template <class K, class V>
struct BoostFlat {
  using Map = boost::unordered_flat_map<K, V, boost::hash<K>, std::equal_to<K>,
                                        counting_allocator<std::pair<const K, V>>>;
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
    g.slot_bytes = sizeof(typename Map::value_type);
    g.bytes_allocated = counted_bytes();
    return g;
  }
};

static int run(const Job& job);
extern const MapInfo kBoostFlat = {"boost_flat", "boost::unordered_flat_map",
                                   "Boost " + std::to_string(BOOST_VERSION / 100000) + "." +
                                       std::to_string(BOOST_VERSION / 100 % 1000),
                                   true, run};
static int run(const Job& job) { return measure_types<BoostFlat>(job, kBoostFlat); }

}  // namespace refs
