#!/usr/bin/env bash
# install-debs.sh STEP PACKAGE[=COMMAND]... — install the Debian packages a
# make target needs, quietly.
#
# A package counts as there when dpkg says it is installed, or, written
# PACKAGE=COMMAND, when COMMAND is on PATH (however it got there). Only the
# missing ones are installed (apt-get update, then apt-get install, with
# sudo when not root). The step prints one line: what it installed and how
# long it took, or that nothing was missing. apt's whole output goes to a
# log file (build/logs/STEP.log, or $PACKLAB_LOG_DIR/STEP.log) named in that
# line, and is shown only when the install fails: then its last lines are
# printed, and the step exits non-zero.
set -u

step=${1:?usage: install-debs.sh STEP PACKAGE[=COMMAND]...}
shift
start=$(date +%s)

missing=()
for spec in "$@"; do
	pkg=${spec%%=*}
	cmd=""
	[ "$spec" != "$pkg" ] && cmd=${spec#*=}
	if [ -n "$cmd" ] && command -v "$cmd" >/dev/null 2>&1; then
		continue
	fi
	if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
		continue
	fi
	missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "$step: nothing to install ($# packages already there)"
	exit 0
fi

log_dir=${PACKLAB_LOG_DIR:-$(cd "$(dirname "$0")" && pwd)/logs}
mkdir -p "$log_dir" || exit 1
log=$log_dir/$step.log

sudo=""
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "$step: cannot install ${missing[*]}: not root and no sudo; install them as root (apt-get install ${missing[*]})" >&2
		exit 1
	fi
	sudo=sudo
fi

# One line, finished when apt is: what, where its output goes, how long.
printf '%s: installing %s with apt-get (output in %s) ...' "$step" "${missing[*]}" "$log"
{
	echo "== $(date -u +%FT%TZ) $step: apt-get update"
	$sudo apt-get update &&
		echo "== $(date -u +%FT%TZ) $step: apt-get install ${missing[*]}" &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
} >"$log" 2>&1 </dev/null
status=$?
secs=$(($(date +%s) - start))
if [ $status -ne 0 ]; then
	echo " failed after ${secs} s (exit $status); the end of $log:"
	tail -n 40 "$log" | sed 's/^/    /'
	exit $status
fi
echo " done in ${secs} s"
