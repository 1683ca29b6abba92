// packlab-refs: the worker's entry (the protocol is in worker.h, the
// plumbing in plumbing.cpp, the measurement in measure.h, one file per map).
//
//   packlab-refs              serve one job from stdin (what the lab starts)
//   packlab-refs --describe   one JSON line: the protocol and the maps built in

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "worker.h"

namespace refs {

extern const MapInfo kBoostFlat, kAbslFlat, kDenseHashMap, kSparseHashMap, kHopscotch;

namespace {

const MapInfo* const kMaps[] = {&kBoostFlat, &kAbslFlat, &kDenseHashMap, &kSparseHashMap, &kHopscotch};

std::string map_names() {
  std::string s;
  for (const MapInfo* m : kMaps) {
    if (!s.empty()) s += ", ";
    s += m->name;
  }
  return s;
}

int describe() {
  std::string out = "{\"protocol\":" + std::to_string(kProtocol) + ",\"key_bytes\":[1,2,4,8,16],\"value_bytes\":[1,2,4,8,16],\"maps\":[";
  bool first = true;
  for (const MapInfo* m : kMaps) {
    if (!first) out += ",";
    first = false;
    out += "{\"name\":" + json_string(m->name) + ",\"map\":" + json_string(m->map) +
           ",\"library\":" + json_string(m->library) + ",\"exact\":" + (m->exact ? "true" : "false") + "}";
  }
  out += "]}";
  write_line(out);
  return 0;
}

int serve() {
  std::map<std::string, std::string> f;
  if (std::string err = read_job(&f); !err.empty()) return fail(err);

  Job job;
  job.layout = f["layout"];
  const MapInfo* info = nullptr;
  for (const MapInfo* m : kMaps) {
    if (job.layout == m->name) info = m;
  }
  if (!info) {
    return fail("unknown layout \"" + job.layout + "\" (allowed: " + map_names() + ")");
  }
  long long v = 0;
  if (f.count("protocol") && (!parse_int(f["protocol"], 0, 1 << 30, &v) || v != kProtocol)) {
    return fail("protocol " + f["protocol"] + ": this packlab-refs speaks protocol " + std::to_string(kProtocol) +
                " (rebuild it with: make refs)");
  }
  auto size_field = [&](const char* name, int* dst) -> bool {
    if (!parse_int(f[name], 1, 16, &v) || (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)) return false;
    *dst = static_cast<int>(v);
    return true;
  };
  if (!size_field("key_bytes", &job.key_bytes)) {
    return fail("key_bytes \"" + f["key_bytes"] + "\": no such key size (allowed: 1, 2, 4, 8, 16)");
  }
  if (!size_field("value_bytes", &job.value_bytes)) {
    return fail("value_bytes \"" + f["value_bytes"] + "\": no such value size (allowed: 1, 2, 4, 8, 16)");
  }
  if (f.count("total_rows") && !parse_int(f["total_rows"], -1, INT64_MAX, &v)) {
    return fail("total_rows \"" + f["total_rows"] + "\": not a row count (allowed: -1 or more)");
  }
  job.total_rows = f.count("total_rows") ? v : -1;
  if (f.count("seed")) {
    char* end = nullptr;
    errno = 0;
    job.seed = std::strtoull(f["seed"].c_str(), &end, 10);
    if (errno != 0 || *end != 0 || f["seed"].empty() || f["seed"][0] == '-') {
      return fail("seed \"" + f["seed"] + "\": not a whole number (allowed: 0 to 18446744073709551615)");
    }
  }
  job.no_read = f["no_read"] == "true";
  job.reserve = f["reserve"] == "true";
  return info->run(job, *info);
}

}  // namespace

}  // namespace refs

int main(int argc, char** argv) {
  return refs::worker_main(argc, argv, "packlab-refs", refs::describe, refs::serve);
}
