#!/usr/bin/env bash
# fetch-chdb.sh DIR PACKAGE SHA256 — put chDB's libchdb.so (ClickHouse as a
# shared library) in DIR, from the pinned npm package, its tarball's sha256
# checked. One line when it fetched (size, time), nothing when DIR already
# has it; npm's output goes to DIR/../fetch.log, shown only on failure.
#
# npm pack downloads the package's tarball (178 MB) without installing
# anything; the library is package/libchdb.so inside (566 MB). It is moved
# into place only once whole, so an interrupted fetch leaves no half file.
set -euo pipefail

dir=${1:?usage: fetch-chdb.sh DIR PACKAGE SHA256}
pkg=${2:?usage: fetch-chdb.sh DIR PACKAGE SHA256}
want=${3:?usage: fetch-chdb.sh DIR PACKAGE SHA256}

[ -f "$dir/libchdb.so" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
	echo "chdb: npm is not on PATH; install Node.js (Debian: apt-get install npm) and run make chdb again" >&2
	exit 1
fi
start=$(date +%s)
mkdir -p "$dir"
log="$(dirname "$dir")/fetch.log"
tmp=$(mktemp -d "$(dirname "$dir")/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --silent "$pkg") >"$log" 2>&1; then
	echo "chdb: npm pack $pkg failed; the last lines of $log:" >&2
	tail -n 15 "$log" >&2
	exit 1
fi
tgz=$(ls "$tmp"/*.tgz)
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$want" ]; then
	echo "chdb: $pkg's tarball has sha256 $got, the Makefile pins $want: not used" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$tmp" package/libchdb.so
mv "$tmp/package/libchdb.so" "$dir/libchdb.so.part"
mv "$dir/libchdb.so.part" "$dir/libchdb.so"
echo "chdb: fetched $pkg ($(du -m "$dir/libchdb.so" | cut -f1) MB, sha256 checked) in $(($(date +%s) - start)) s"
