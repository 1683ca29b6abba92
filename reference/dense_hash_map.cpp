// google::dense_hash_map (sparsehash): open addressing with quadratic
// probing over a power-of-two array of std::pair<const K, V> cells, grows at
// 0.5 full (the cells of packlab's `hashed`, with another probe and hash).
#include <sparsehash/dense_hash_map>

#include "measure.h"

namespace refs {

// DenseHash needs one key value reserved as "empty" (all ones here). A key
// equal to it lives beside the table, as ClickHouse's zero cell does, so
// every key of the type can be stored.
template <class K, class V>
struct DenseHash {
  using Map = google::dense_hash_map<K, V>;
  static K empty_key() { return from_words<K>(~uint64_t{0}, ~uint64_t{0}); }
  Map m;
  bool has_side = false;
  V side{};
  DenseHash() { m.set_empty_key(empty_key()); }
  bool insert(const K& k, const V& v) {
    if (k == empty_key()) {
      if (has_side) return false;
      has_side = true;
      side = v;
      return true;
    }
    return m.insert(typename Map::value_type(k, v)).second;
  }
  const V* find(const K& k) const {
    if (k == empty_key()) return has_side ? &side : nullptr;
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  }
  template <class F>
  void each(F&& f) const {
    for (const auto& p : m) f(p.first, p.second);
    if (has_side) f(empty_key(), side);
  }
  std::size_t size() const { return m.size() + (has_side ? 1 : 0); }
  // dense_hash_map's reserve is resize(n): buckets for n below its max load factor.
  void reserve(std::size_t n) { m.resize(n); }
  // The table is one array of bucket_count cells (densehashtable.h allocates
  // exactly that): computed from the geometry, hence estimated.
  Geometry geometry() const {
    Geometry g;
    g.bucket_count = static_cast<int64_t>(m.bucket_count());
    g.max_load_factor = m.max_load_factor();
    g.slot_bytes = sizeof(typename Map::value_type);
    g.bytes_allocated = g.bucket_count * g.slot_bytes;
    g.estimated = true;
    return g;
  }
};

extern const MapInfo kDenseHashMap = {"dense_hash_map", "google::dense_hash_map", "sparsehash", false,
                                      measure_types<DenseHash>};

}  // namespace refs
