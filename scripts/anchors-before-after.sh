#!/usr/bin/env bash
# usage: scripts/anchors-before-after.sh REV[,REV...] N ROUNDS MAPS...   (from the project root)
#
# The side-by-side harness (the folder $ANCHORS names; not part of a clone) on packlab as of
# each git revision REV and as this checkout is ("now"), in one run: each
# round runs every map in turn, and each packlab:... map once for every
# version, the versions' order rotating from round to round (on a VM a load
# runs faster in memory its predecessor just freed), so that a busy machine
# slows all of them alike. MAPS are run.sh's (boost_flat,
# packlab:packed@sharded:1, ...). Prints every run's CSV line, then a
# markdown table of medians.
set -euo pipefail
usage="usage: anchors-before-after.sh REV[,REV...] N ROUNDS MAPS..."
REVS=${1:?$usage} N=${2:?$usage} ROUNDS=${3:?$usage}
shift 3
[[ $# -gt 0 ]] || { echo "anchors-before-after: name at least one map ($usage)" >&2; exit 2; }
[[ -n "${ANCHORS:-}" && -d "$ANCHORS" ]] || { echo "anchors-before-after: set ANCHORS to the side-by-side harness's folder (it is not part of a clone)" >&2; exit 2; }
ANCHORS=$(cd "$ANCHORS" && pwd)
work=$(mktemp -d)
IFS=, read -ra revs <<<"$REVS"
cleanup() {
  for rev in "${revs[@]}"; do git worktree remove --force "$work/src-$rev" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
make -s -C "$ANCHORS" deps >&2
make -s -C "$ANCHORS" all PROJECT="$PWD" BUILD="$work/now" >&2
for rev in "${revs[@]}"; do
  git worktree add --detach -q "$work/src-$rev" "$rev"
  make -s -C "$ANCHORS" packlab PROJECT="$work/src-$rev" BUILD="$work/$rev" >&2
done
versions=("${revs[@]}" now)

out=$work/runs.csv
echo "name,N,load_s,read_s,read_Mrows_s,rss_bytes,rss_bytes_per_entry,peak_bytes_per_entry,checksum"
for ((r = 0; r < ROUNDS; r++)); do
  for m in "$@"; do
    case $m in
      packlab:*)
        s=${m#packlab:} mode=direct
        [[ $s == *@* ]] && { mode=${s#*@}; s=${s%%@*}; }
        for ((i = 0; i < ${#versions[@]}; i++)); do
          v=${versions[(i + r) % ${#versions[@]}]}
          "$work/$v/packlab-anchor" "$N" "$s" "$mode" 2>/dev/null | sed "s/^packlab-/packlab($v)-/" | tee -a "$out"
        done ;;
      go_u16) "$work/now/gomap" "$N" u16 2>/dev/null | tee -a "$out" ;;
      *) "$work/now/bench_$m" "$N" 2>/dev/null | tee -a "$out" ;;
    esac
  done
done
echo
echo "| map | N | load s | read Mrows/s | RSS B/pair | peak B/pair |   (medians of $ROUNDS)"
echo "|---|---:|---:|---:|---:|---:|"
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = {}
for r in csv.reader(open(sys.argv[1])):
    rows.setdefault(r[0], []).append(r)
for name, rs in rows.items():
    med = lambda i: statistics.median(float(x[i]) for x in rs)
    print(f"| {name} | {rs[0][1]} | {med(2):.2f} | {med(4):.2f} | {med(6):.1f} | {med(7):.1f} |")
PY
