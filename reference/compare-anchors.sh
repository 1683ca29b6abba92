#!/usr/bin/env bash
# usage: reference/compare-anchors.sh N [ANCHORS]   (from the project root)
#
# Each reference map's RSS and peak per pair at N random <UInt64,UInt16>,
# measured by the lab (bin/packlab run) and by the plain C++ harness of
# ANCHORS (or $ANCHORS: the side-by-side harness's folder, not part of a
# clone: the same map alone in a program with
# its keys in a vector), and lab / harness. Memory only: times are not
# comparable (the harness times bare inserts; the lab's load includes
# receiving the rows over a pipe). Needs make build and make refs first.
set -euo pipefail
N=${1:?usage: compare-anchors.sh N [ANCHORS]}
ANCHORS=${2:-${ANCHORS:-}}
[[ -n "$ANCHORS" && -d "$ANCHORS" ]] || { echo "compare-anchors: give the side-by-side harness's folder (argument 2 or \$ANCHORS; it is not part of a clone)" >&2; exit 2; }
[[ -x bin/packlab && -x bin/packlab-refs ]] || { echo "compare-anchors: run make build refs first" >&2; exit 2; }
lab=$(mktemp) harness=$(mktemp)
trap 'rm -f "$lab" "$harness"' EXIT
bin/packlab run --layout boost_flat,absl_flat,dense_hash_map,sparse_hash_map,hopscotch \
  --rows "$N" --no-save --format json >"$lab"
"$ANCHORS/run.sh" "$N" 1 boost_flat absl_flat google_dense google_sparse tsl_hopscotch 2>/dev/null |
  grep '^cpp-' >"$harness"
python3 - "$lab" "$harness" <<'PY'
import csv, json, sys
lab = {r["layout"]: r for r in json.load(open(sys.argv[1]))}
names = {"cpp-boost-unordered_flat_map": "boost_flat", "cpp-absl-flat_hash_map": "absl_flat",
         "cpp-google-dense_hash_map": "dense_hash_map", "cpp-google-sparse_hash_map": "sparse_hash_map",
         "cpp-tsl-hopscotch_map": "hopscotch"}
print("| map | N | lab RSS B/pair | harness RSS B/pair | RSS lab/harness | lab peak B/pair | harness peak B/pair | peak lab/harness |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for row in csv.reader(open(sys.argv[2])):
    name, n = names[row[0]], int(row[1])
    r = lab[name]
    rss, peak = r["rss_bytes"] / n, r["peak_rss_bytes"] / n
    hrss, hpeak = float(row[6]), float(row[7])
    print(f"| {name} | {n:.0e} | {rss:.2f} | {hrss:.2f} | {rss / hrss:.3f} | {peak:.2f} | {hpeak:.2f} | {peak / hpeak:.3f} |")
PY
