// absl::flat_hash_map (Abseil): a Swiss table, one control byte per slot
// (plus 15 cloned), capacity 2^n - 1, grows at 7/8 full.
#include <absl/base/config.h>
#include <absl/container/flat_hash_map.h>

#include "measure.h"

namespace refs {

// AbslHashValue makes absl::Hash, the library's default hasher, take a
// 16-byte key: its own combine over both words.
template <typename H>
H AbslHashValue(H h, const U128& x) {
  return H::combine(std::move(h), x.lo, x.hi);
}

template <class K, class V>
struct AbslFlat : MapAdapter<absl::flat_hash_map<K, V, absl::Hash<K>, std::equal_to<K>,
                                                  counting_allocator<std::pair<const K, V>>>> {
  // absl grows at 7/8 full; its max_load_factor() is a stub that says 1.
  Geometry geometry() const { return this->counted_geometry(sizeof(std::pair<const K, V>), 7.0 / 8); }
};

#ifdef ABSL_LTS_RELEASE_VERSION
extern const MapInfo kAbslFlat = {"absl_flat", "absl::flat_hash_map",
                                  "Abseil LTS " + std::to_string(ABSL_LTS_RELEASE_VERSION), true,
                                  measure_types<AbslFlat>};
#else
extern const MapInfo kAbslFlat = {"absl_flat", "absl::flat_hash_map", "Abseil", true,
                                  measure_types<AbslFlat>};
#endif

}  // namespace refs
