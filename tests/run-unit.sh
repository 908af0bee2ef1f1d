#!/usr/bin/env bash
# Runs every Criterion unit-test binary under BUILD/tests (except MPI
# programs), each under a hard timeout, from the source root.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
fail=0 n=0
# ASan builds: leaks inside the test framework itself are not ours
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
for t in $(find "$build/tests" -type f -name 'test_*' -perm -u+x | sort); do
    n=$((n + 1))
    if out=$(timeout -k 5 120 "$t" --jobs 2 2>&1) && ! echo "$out" | grep -q "Tested: 0 "; then
        echo "PASS unit $(basename "$t"): $(echo "$out" | grep -o 'Tested: .*' | tail -1)"
    else
        echo "FAIL unit $(basename "$t")"
        echo "$out" | tail -40
        fail=1
    fi
done
[ $n -gt 0 ] || { echo "no unit tests found under $build/tests"; exit 1; }
exit $fail
