// google::sparse_hash_map (sparsehash): groups of 48 buckets, each a bitmap
// and a malloc'd array of only its occupied cells, reallocated one cell
// bigger on every insert; grows at 0.8 full. packlab's `sparse` is this
// table in Go (with ClickHouse's 0.5).
#include <sparsehash/sparse_hash_map>

#include "measure.h"

namespace refs {

template <class K, class V>
struct SparseHash : MapAdapter<google::sparse_hash_map<K, V>> {
  using Map = google::sparse_hash_map<K, V>;
  // sparse_hash_map's reserve is resize(n): buckets for n below its max load
  // factor (the groups' vectors still grow one insert at a time).
  void reserve(std::size_t n) { this->m.resize(n); }
  using Group = google::sparsegroup<typename Map::value_type, 48,
                                    google::libc_allocator_with_realloc<typename Map::value_type>>;
  // The group headers (one per 48 buckets) plus one cell per element, as
  // sparsetable allocates them; malloc's own header and rounding of each
  // small array are not counted (they show as measured overhead).
  Geometry geometry() const {
    Geometry g;
    g.bucket_count = static_cast<int64_t>(this->m.bucket_count());
    g.max_load_factor = this->m.max_load_factor();
    g.slot_bytes = sizeof(typename Map::value_type);
    const int64_t groups = (g.bucket_count + 47) / 48;
    g.bytes_allocated = groups * static_cast<int64_t>(sizeof(Group)) +
                        static_cast<int64_t>(this->m.size()) * g.slot_bytes;
    g.estimated = true;
    g.empty_cells = false;
    return g;
  }
};

extern const MapInfo kSparseHashMap = {"sparse_hash_map", "google::sparse_hash_map", "sparsehash", false,
                                       measure_types<SparseHash>};

}  // namespace refs
