#!/usr/bin/env bash
# usage: scripts/anchors-before-after.sh REV N ROUNDS MAPS...   (from the project root)
#
# The side-by-side harness (../shared/anchors, or $ANCHORS) on packlab as of
# git revision REV ("before") and as this checkout is ("after"), in one run:
# each round runs every map in turn, and each packlab:... map once for each
# version, before first in odd rounds and after first in even ones (on a VM
# a load runs faster in memory its predecessor just freed), so that a busy
# machine slows all of them alike. MAPS are run.sh's
# (boost_flat, packlab:packed@sharded:1, ...). Prints every run's CSV line,
# then a markdown table of medians.
set -euo pipefail
REV=${1:?usage: anchors-before-after.sh REV N ROUNDS MAPS...}
N=${2:?usage: anchors-before-after.sh REV N ROUNDS MAPS...}
ROUNDS=${3:?usage: anchors-before-after.sh REV N ROUNDS MAPS...}
shift 3
[[ $# -gt 0 ]] || { echo "anchors-before-after: name at least one map" >&2; exit 2; }
ANCHORS=$(cd "${ANCHORS:-../shared/anchors}" && pwd)
work=$(mktemp -d)
trap 'git worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach -q "$work/src" "$REV"
make -s -C "$ANCHORS" deps >&2
make -s -C "$ANCHORS" all PROJECT="$work/src" BUILD="$work/before" >&2
make -s -C "$ANCHORS" packlab PROJECT="$PWD" BUILD="$work/after" >&2

out=$work/runs.csv
echo "name,N,load_s,read_s,read_Mrows_s,rss_bytes,rss_bytes_per_entry,peak_bytes_per_entry,checksum"
for ((r = 1; r <= ROUNDS; r++)); do
  for m in "$@"; do
    case $m in
      packlab:*)
        s=${m#packlab:} mode=direct
        [[ $s == *@* ]] && { mode=${s#*@}; s=${s%%@*}; }
        order="before after"; ((r % 2)) || order="after before"
        for v in $order; do
          "$work/$v/packlab-anchor" "$N" "$s" "$mode" 2>/dev/null | sed "s/^packlab-/packlab($v)-/" | tee -a "$out"
        done ;;
      go_u16) "$work/before/gomap" "$N" u16 2>/dev/null | tee -a "$out" ;;
      *) "$work/before/bench_$m" "$N" 2>/dev/null | tee -a "$out" ;;
    esac
  done
done
echo
echo "| map | N | load s | read Mrows/s | RSS B/pair | peak B/pair |   (medians of $ROUNDS; packlab before = $REV)"
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
