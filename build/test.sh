#!/usr/bin/env bash
# test.sh STAGE... — `make test`: each stage is a make target run through
# stage.sh (one line when it ends, a line every 20 s while it runs, its
# output in build/logs/stage-STAGE.log), in order, stopping at the first
# that fails. Stages that run `go test` (GOTEST_STAGES) run it with -v so
# that their tests can be counted; the last line adds them up.
set -u
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
GOTEST_STAGES=" unit race ports test-desktop test-web fuzz "
log_dir=${PACKLAB_LOG_DIR:-build/logs}
mkdir -p "$log_dir"
rm -f "$log_dir/test-counts"
start=$(date +%s)
for stage in "$@"; do
	if [[ $GOTEST_STAGES == *" $stage "* ]]; then
		bash build/stage.sh "$stage" --gotest -- "$MAKE" -s --no-print-directory "$stage" GOTESTFLAGS=-v || exit $?
	else
		bash build/stage.sh "$stage" -- "$MAKE" -s --no-print-directory "$stage" || exit $?
	fi
done
secs=$(($(date +%s) - start))
awk -v secs="$secs" '{p += $1; f += $2; s += $3}
	END {printf "test: %d passed, %d failed, %d skipped (%dm%02ds)\n", p, f, s, secs / 60, secs % 60}' "$log_dir/test-counts"
