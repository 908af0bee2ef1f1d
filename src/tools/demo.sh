#!/usr/bin/env bash
# make demo: four ranks over failstop; rank 3 is killed after 2 s while rank 0
# is blocked receiving from it.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.."
echo "== failstop demo: 4 ranks, rank 3 is SIGKILLed 2 s after start"
timeout -k 5 60 "$build/bin/failstop-run" --kill 3@2 --oversubscribe -np 4 \
    "$build/demo/failstop-demo"
rc=$?
echo "== failstop-run exit status: $rc (0: the survivors finished normally)"
exit $rc
