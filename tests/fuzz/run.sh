#!/usr/bin/env bash
# tests/fuzz/run.sh FUZZ_BUILD SECONDS: runs each libFuzzer target in
# FUZZ_BUILD/fuzz for SECONDS, from its seeds in tests/fuzz/corpus/<name>
# (read only: new inputs go to a scratch directory).  A crash, a sanitizer
# report, an input running over 5 s (a hang) or over 2 GB fails the run;
# the input that did it is kept in FUZZ_BUILD/crashes/ to reproduce with
# FUZZ_BUILD/fuzz/<target> <file>.
# Exit status: 0 nothing found, 1 something found, 2 usage/setup error.
set -u -o pipefail

die() { echo "fuzz/run.sh: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "usage: $0 FUZZ_BUILD SECONDS"
BUILD=$1 SECONDS_EACH=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-fuzz.XXXXXX") || die "mktemp"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$BUILD/crashes"

fail=0 n=0
for bin in "$BUILD"/fuzz/fuzz_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin") kind=${name#fuzz_}
    [ -d "$HERE/corpus/$kind" ] || die "no seeds in tests/fuzz/corpus/$kind"
    n=$((n + 1))
    mkdir -p "$WORK/$kind"
    # the hard limit is the run's own plus a margin for the final merge
    timeout -k 10 $((SECONDS_EACH + 120)) "$bin" -max_total_time="$SECONDS_EACH" \
        -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$BUILD/crashes/$kind-" "$WORK/$kind" "$HERE/corpus/$kind" \
        > "$WORK/$kind.log" 2>&1
    rc=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/$kind.log" | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "$WORK/$kind.log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "PASS fuzz $kind: ${runs:-?} inputs in ${SECONDS_EACH}s, $cov, nothing found"
    else
        echo "FAIL fuzz $kind: exit $rc (artifacts in $BUILD/crashes/)"
        grep -E "ERROR|SUMMARY|fuzz_|Test unit written" "$WORK/$kind.log" | head -20
        fail=1
    fi
done
[ $n -gt 0 ] || die "no fuzz targets in $BUILD/fuzz (make fuzz-build)"
exit $fail
