// tsl::hopscotch_map (Tessil): open addressing over a power-of-two array of
// buckets, each a cell and a 62-bit neighbourhood bitmap; an element sits
// within 62 buckets of its home, else in an overflow list; grows at 0.9 full.
#include <tsl/hopscotch_map.h>

#include "measure.h"

namespace refs {

template <class K, class V>
struct Hopscotch : MapAdapter<tsl::hopscotch_map<K, V, std::hash<K>, std::equal_to<K>,
                                                 counting_allocator<std::pair<K, V>>>> {
  // The bucket type of the map above (NeighborhoodSize 62, StoreHash false).
  using Bucket = tsl::detail_hopscotch_hash::hopscotch_bucket<std::pair<K, V>, 62, false>;
  Geometry geometry() const { return this->counted_geometry(sizeof(Bucket), this->m.max_load_factor()); }
};

extern const MapInfo kHopscotch = {"hopscotch", "tsl::hopscotch_map", "tsl-hopscotch-map", true,
                                   measure_types<Hopscotch>};

}  // namespace refs
