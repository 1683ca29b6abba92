package dict

// The C++ reference maps: the maps a user would pick instead of packlab's
// layouts, held by the reference worker (packlab-refs, driven by package
// experiments/refdriver, which models their growth). dict names them so
// that every room tells a reference map's run from packlab's and
// ClickHouse's without asking the driver.

// ReferenceMap is one C++ reference map.
type ReferenceMap struct {
	Name string `json:"name"` // as Config.Layouts takes it: boost_flat
	Map  string `json:"map"`  // the C++ type: boost::unordered_flat_map
	Doc  string `json:"doc"`  // one line: what it is
}

var referenceMaps = []ReferenceMap{
	{Name: "boost_flat", Map: "boost::unordered_flat_map",
		Doc: "Boost's flat map (1.81+): groups of 15 slots with SIMD-matched metadata, grows at 0.875 full"},
	{Name: "absl_flat", Map: "absl::flat_hash_map",
		Doc: "Abseil's Swiss table: one control byte per slot, capacity 2^n-1, grows at 7/8 full"},
	{Name: "dense_hash_map", Map: "google::dense_hash_map",
		Doc: "google sparsehash's dense table: padded pairs, quadratic probing, grows at 0.5 full"},
	{Name: "sparse_hash_map", Map: "google::sparse_hash_map",
		Doc: "google sparsehash's sparse table: 48-bucket groups of only the occupied pairs, grows at 0.8 full"},
	{Name: "hopscotch", Map: "tsl::hopscotch_map",
		Doc: "Tessil's hopscotch map: each bucket a pair and a 62-bit neighbourhood bitmap, grows at 0.9 full"},
}

// ReferenceMaps lists the reference maps, in the order the lab shows them.
func ReferenceMaps() []ReferenceMap { return append([]ReferenceMap(nil), referenceMaps...) }

// FindReferenceMap finds a reference map by name, as core.ParseLayout reads
// names: case and '-' for '_' do not matter.
func FindReferenceMap(name string) (ReferenceMap, bool) {
	return findNamed(referenceMaps, name, func(m ReferenceMap) string { return m.Name })
}
