#!/usr/bin/env bash
# tests/mpi/exit_status.sh BUILD_DIR: failstop-run's exit status (the rule
# is in the README and at the top of src/tools/failstop-run) for each way a
# job can end; x_exit.c makes the ranks end that way.  The output must not
# carry mpirun's PMIx error for an abnormal end.  Each run is under a
# hard limit of 60 s; about 20 s in all.
# Exit status: 0 all passed, 1 something failed, 2 usage/setup error.
set -u -o pipefail

die() { echo "exit_status.sh: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
RUN="$1/bin/failstop-run"
PROG="$1/tests/mpi/x_exit"
[ -x "$RUN" ] && [ -x "$PROG" ] || die "build first ($RUN, $PROG)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fs-exittest.XXXXXX") || die "mktemp"
sid=""
reap() { local p; [ -n "$sid" ] || return 0
    for p in $(ps -o pid= -s "$sid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done; }
trap 'reap; rm -rf "$WORK"' EXIT

failed=0
# case NAME WANT [ENV=VALUE...] -- [failstop-run options] -- MODE
#   WANT: a number, or "nonzero"
case_() {
    local name=$1 want=$2 envs=() opts=() rc t0=$SECONDS
    shift 2
    while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
    while [ "$1" != -- ]; do opts+=("$1"); shift; done; shift
    setsid env "${envs[@]}" timeout -k 5 60 "$RUN" "${opts[@]}" --oversubscribe \
        --bind-to none -np 3 "$PROG" "$1" > "$WORK/$name.out" 2>&1 < /dev/null &
    sid=$!
    wait "$sid"; rc=$?
    reap; sid=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL exit-status $name: the job did not end within 60 s"
    elif grep -q 'PMIX ERROR' "$WORK/$name.out"; then
        # mpirun's noise when a process ends abnormally (failstop-run drops it)
        echo "FAIL exit-status $name: stray PMIx error in the output"
    elif { [ "$want" = nonzero ] && [ "$rc" -ne 0 ]; } || [ "$rc" = "$want" ]; then
        echo "PASS exit-status $name: $rc $((SECONDS - t0))s"
        return
    else
        echo "FAIL exit-status $name: failstop-run exited $rc, want $want"
    fi
    sed 's/^/    /' "$WORK/$name.out" | tail -20
    failed=$((failed + 1))
}

case_ all-finalize-0           0        -- -- ok
case_ ranks-return-their-rank  1        -- -- rankcode
case_ exit-0-without-finalize  1        -- -- nofin
case_ exit-3-undeclared        3        -- -- exit3
case_ segv-undeclared          139      -- -- segv
case_ no-record-undeclared     nonzero  -- -- lost
case_ killed-survivors-finish  0        -- --kill 1@1 -- victim
case_ killed-survivor-returns-2 2       -- --kill 1@1 -- victim2
case_ launcher-time-limit      nonzero  MPIEXEC_TIMEOUT=3 -- -- spin
case_ mpi-abort-7              7        -- -- abort

[ $failed -eq 0 ] && { echo "exit_status.sh: all passed"; exit 0; }
echo "exit_status.sh: $failed case(s) failed"
exit 1
