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
struct BoostFlat : MapAdapter<boost::unordered_flat_map<K, V, boost::hash<K>, std::equal_to<K>,
                                                         counting_allocator<std::pair<const K, V>>>> {
  Geometry geometry() const {
    return this->counted_geometry(sizeof(std::pair<const K, V>), this->m.max_load_factor());
  }
};

extern const MapInfo kBoostFlat = {"boost_flat", "boost::unordered_flat_map",
                                   "Boost " + std::to_string(BOOST_VERSION / 100000) + "." +
                                       std::to_string(BOOST_VERSION / 100 % 1000),
                                   true, measure_types<BoostFlat>};

}  // namespace refs
