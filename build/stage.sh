#!/usr/bin/env bash
# stage.sh NAME [--gotest] -- COMMAND... — one stage of `make test`, quietly.
#
# The command's whole output goes to build/logs/stage-NAME.log (or
# $PACKLAB_LOG_DIR). The stage prints one line when it ends: its time and,
# for a stage of `go test -v` runs (--gotest), how many tests and subtests
# passed and were skipped, counted from that log. A stage still running
# prints a line every $STAGE_TICK seconds (20) with the last line of its
# log, so that no stage is silent for longer. A command that printed one or
# two lines (an install step saying what it did) has them on the stage's
# line. When the command fails, the stage prints the failing
# tests' lines and the log's last lines, names the log, and exits with the
# command's status.
set -u

name=${1:?usage: stage.sh NAME [--gotest] -- COMMAND...}
shift
gotest=0
if [ "${1:-}" = "--gotest" ]; then
	gotest=1
	shift
fi
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "stage.sh: $name: no command" >&2; exit 2; }

tick=${STAGE_TICK:-20}
log_dir=${PACKLAB_LOG_DIR:-$(cd "$(dirname "$0")" && pwd)/logs}
mkdir -p "$log_dir" || exit 1
log=$log_dir/stage-$name.log
counts=$log_dir/test-counts

fmt_secs() {
	local s=$1
	if [ "$s" -ge 60 ]; then printf '%dm%02ds' $((s / 60)) $((s % 60)); else printf '%ds' "$s"; fi
}

start=$(date +%s)
"$@" >"$log" 2>&1 </dev/null &
pid=$!
# Forward an interrupt to the command, then stop.
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; exit 130' INT TERM

next=$((start + tick))
while kill -0 "$pid" 2>/dev/null; do
	sleep 1
	now=$(date +%s)
	if [ "$now" -ge "$next" ] && kill -0 "$pid" 2>/dev/null; then
		last=$(grep -v '^[[:space:]]*$' "$log" 2>/dev/null | tail -n 1 | tr -d '\r' | cut -c1-100)
		echo "$name: running, $(fmt_secs $((now - start))) so far${last:+: $last}"
		next=$((now + tick))
	fi
done
wait "$pid"
status=$?
secs=$(($(date +%s) - start))

passed=0 failed=0 skipped=0
if [ "$gotest" = 1 ]; then
	passed=$(grep -cE '^[[:space:]]*--- PASS:' "$log")
	failed=$(grep -cE '^[[:space:]]*--- FAIL:' "$log")
	skipped=$(grep -cE '^[[:space:]]*--- SKIP:' "$log")
fi

if [ "$status" -eq 0 ]; then
	if [ "$gotest" = 1 ]; then
		echo "$name: ok in $(fmt_secs "$secs") ($passed passed, $skipped skipped)"
		echo "$passed $failed $skipped" >>"$counts"
	else
		lines=$(grep -cv '^[[:space:]]*$' "$log")
		if [ "$lines" -ge 1 ] && [ "$lines" -le 2 ]; then
			echo "$name: ok in $(fmt_secs "$secs") — $(grep -v '^[[:space:]]*$' "$log" | paste -sd ';' | sed 's/;/; /g')"
		else
			echo "$name: ok in $(fmt_secs "$secs")"
		fi
	fi
	exit 0
fi

echo "$name: FAILED in $(fmt_secs "$secs") (exit $status); the whole output is in $log"
if [ "$gotest" = 1 ]; then
	echo "$name: $passed passed, $failed failed, $skipped skipped"
	echo "$passed $failed $skipped" >>"$counts"
	grep -E '^[[:space:]]*--- FAIL:|^FAIL|^panic:' "$log" | head -n 40
	# What each failing test said: its lines since its "=== RUN" (the
	# last 30 of them), so that CI's short excerpt shows why, not only which.
	awk '/^=== (RUN|CONT)/ { n = 0 } { buf[n++ % 30] = $0 }
		/^[[:space:]]*--- FAIL:/ { print "---- " $0 " said:"; s = n > 30 ? n - 30 : 0; for (i = s; i < n; i++) print buf[i % 30] }' "$log" | head -n 120
fi
echo "---- the last 60 lines of $log ----"
tail -n 60 "$log"
exit "$status"
